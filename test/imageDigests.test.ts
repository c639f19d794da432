/**
 * No invented or unverified digest (issue 19): every digest in a stack file, the configuration's
 * defaults, gitops/ and the chart values the program emits has its record in images.lock.json
 * (reference, digest, source, date), and none is the SHA-256 of its own reference string.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import {
    argoCdValues, certManagerValues, ingressNginxValues, metricsServerValues, monitoringValues, reloaderValues, vpaValues,
} from "../components/platform/addonValues";
import { childApps } from "../components/platform/gitopsChildren";
import { imageLockProblems, IMAGES_LOCK_FILE, readImageLock, unrecordedDigests } from "../config/imageLock";
import { offlineStackConfig } from "../tools/genGitops";
import { listStacks, REPO_ROOT } from "../cli/harness/stackConfig";

const sha = (s: string) => `sha256:${createHash("sha256").update(s).digest("hex")}`;

function filesUnder(dir: string): string[] {
    if (!fs.existsSync(dir)) return [];
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? filesUnder(path.join(dir, e.name)) : [path.join(dir, e.name)]));
}

test("images.lock.json is well formed: one complete record per reference, no self-hash, no placeholder", () => {
    assert.deepEqual(imageLockProblems(JSON.parse(fs.readFileSync(IMAGES_LOCK_FILE, "utf8"))), []);
});

test("the record check refuses incomplete records, duplicates, the placeholder and a digest that hashes its own reference", () => {
    const ref = "docker.io/library/postgres:15.10";
    const ok = { reference: ref, digest: `sha256:${"ab".repeat(32)}`, source: "registry answer of the test", date: "2026-11-25" };
    assert.deepEqual(imageLockProblems({ images: [ok] }), []);
    const p = imageLockProblems({
        images: [
            { ...ok, digest: sha(ref) },
            { ...ok, reference: "docker.io/library/redis:7.2.6", digest: sha("redis:7.2.6") },
            { ...ok, reference: "docker.io/library/busybox:1.37.0", source: "", date: "yesterday" },
            { ...ok, reference: "docker.io/minio/mc:x", digest: `sha256:${"0".repeat(64)}` },
            { ...ok, reference: "docker.io/minio/mc:x" },
            { ...ok, reference: `${ref}@${ok.digest}` },
        ],
    });
    assert.deepEqual(p, [
        "images[0].digest: is the SHA-256 of the reference string itself, not of an image manifest",
        "images[1].digest: is the SHA-256 of the reference string itself, not of an image manifest",
        "images[2].source: expected where the digest was verified (registry answer or published record)",
        'images[2].date: "yesterday" is not a date YYYY-MM-DD',
        "images[3].digest: the offline render's placeholder is not a digest",
        "images[4].reference: docker.io/minio/mc:x has a record already",
        `images[5].reference: "${ref}@${ok.digest}" is not an image reference with registry and tag and no digest, such as "docker.io/library/postgres:15.10"`,
    ]);
});

test("the scan finds an unrecorded digest and the digest of the reference string (the old prod pins)", () => {
    const ref = "docker.io/library/postgres:15.10";
    const text = `ops:postgresImage: ${ref}@${sha(ref)}\nops:redisImage: docker.io/library/redis:7.2.6@sha256:${"cd".repeat(32)}\nvalue: sha256:${"ef".repeat(32)}\n`;
    assert.deepEqual(unrecordedDigests(text, "Pulumi.x.yaml", []), [
        `Pulumi.x.yaml: ${ref}@${sha(ref)} is the SHA-256 of the reference string itself`,
        `Pulumi.x.yaml: docker.io/library/redis:7.2.6@sha256:${"cd".repeat(32)} has no record in images.lock.json`,
        `Pulumi.x.yaml: sha256:${"ef".repeat(32)} has no record in images.lock.json`,
    ]);
    const recorded = [{ reference: "docker.io/library/redis:7.2.6", digest: `sha256:${"cd".repeat(32)}`, source: "registry answer of the test", date: "2026-11-25" }];
    assert.deepEqual(unrecordedDigests(`x: docker.io/library/redis:7.2.6@sha256:${"cd".repeat(32)}`, "f", recorded), []);
});

test("every digest in the stack files, the configuration's defaults, gitops/ and the emitted chart values is recorded", () => {
    const records = readImageLock();
    const files = [
        ...fs.readdirSync(REPO_ROOT).filter((f) => /^Pulumi(\.[\w-]+)?\.yaml$/.test(f)).map((f) => path.join(REPO_ROOT, f)),
        ...filesUnder(path.join(REPO_ROOT, "gitops")),
        ...filesUnder(path.join(REPO_ROOT, "config")).filter((f) => f.endsWith(".ts")),
    ];
    assert.ok(files.some((f) => f.endsWith("Pulumi.prod.yaml")) && files.some((f) => f.includes(`${path.sep}gitops${path.sep}`)));
    const problems = files.flatMap((f) => unrecordedDigests(fs.readFileSync(f, "utf8"), path.relative(REPO_ROOT, f), records));
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack);
        const values = {
            ingressNginx: ingressNginxValues(cfg), certManager: certManagerValues(cfg), reloader: reloaderValues(cfg), metricsServer: metricsServerValues(cfg),
            vpa: vpaValues(cfg), argoCd: argoCdValues(cfg), monitoring: monitoringValues(cfg),
            ...Object.fromEntries(childApps(cfg).map((c) => [c.key, c.values])),
        };
        problems.push(...unrecordedDigests(JSON.stringify(values), `${stack}: chart values`, records));
    }
    assert.deepEqual(problems, []);
});
