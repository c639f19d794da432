/**
 * The tag → digest resolution of the deploy pipeline (tools/images/lock.ts) against a fake registry
 * on loopback: anonymous token flow, digest = SHA-256 of the manifest bytes checked against
 * Docker-Content-Digest, the lock written only when every tag resolved, and the program then running
 * prod from it.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { loadConfig, mapSource } from "../config";
import { imageLockProblems } from "../config/imageLock";
import { main, parseReference, stackImages } from "../tools/images/lock";
import { readStackValues } from "../cli/harness/stackConfig";

const manifest = (repo: string, tag: string) => Buffer.from(JSON.stringify({ schemaVersion: 2, mediaType: "application/vnd.oci.image.index.v1+json", manifests: [], annotations: { repo, tag } }));
const sha = (b: Buffer) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

interface Fake { base: string; seen: string[]; close: () => Promise<void>; missing: Set<string>; lying: Set<string> }

async function fakeRegistry(): Promise<Fake> {
    const seen: string[] = [];
    const missing = new Set<string>();
    const lying = new Set<string>();
    let base = "";
    const server = http.createServer((req, res) => {
        const url = new URL(req.url!, base);
        seen.push(`${req.method} ${url.pathname}${req.headers.authorization ? " (token)" : ""}`);
        if (url.pathname === "/token") {
            assert.equal(url.searchParams.get("service"), "fake-registry");
            return void res.setHeader("content-type", "application/json").end(JSON.stringify({ token: `t-${url.searchParams.get("scope")}` }));
        }
        const m = /^\/v2\/(.+)\/manifests\/([^/]+)$/.exec(url.pathname);
        if (!m) return void res.writeHead(404).end();
        const [, repo, tag] = m;
        if (req.headers.authorization !== `Bearer t-repository:${repo}:pull`) {
            res.writeHead(401, { "www-authenticate": `Bearer realm="${base}/token",service="fake-registry",scope="repository:${repo}:pull"` });
            return void res.end();
        }
        if (missing.has(`${repo}:${tag}`)) return void res.writeHead(404).end('{"errors":[{"code":"MANIFEST_UNKNOWN"}]}');
        const body = manifest(repo, tag);
        res.writeHead(200, { "content-type": "application/vnd.oci.image.index.v1+json", "docker-content-digest": lying.has(`${repo}:${tag}`) ? `sha256:${"9".repeat(64)}` : sha(body) });
        res.end(body);
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    return { base, seen, missing, lying, close: () => new Promise((r) => server.close(() => r())) };
}

const sink = () => {
    let text = "";
    return { write: (s: string) => ((text += s), true), get text() { return text; } };
};

test("references are parsed with their registry; one without a registry host is refused", () => {
    assert.deepEqual(parseReference("docker.io/library/postgres:15.10"), { registry: "docker.io", repository: "library/postgres", tag: "15.10" });
    assert.deepEqual(parseReference("registry.example.com:5000/ops/app:1.2"), { registry: "registry.example.com:5000", repository: "ops/app", tag: "1.2" });
    assert.throws(() => parseReference("postgres:15.10"), /expected registry\/repository:tag/);
});

test("every prod image is resolved through the token flow, recorded with its source, and the program runs prod from the lock", async () => {
    const fake = await fakeRegistry();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "images-lock-"));
    try {
        const refs = stackImages("prod");
        assert.ok(refs.includes("docker.io/library/postgres:15.10") && refs.every((r) => !r.includes("@")), refs.join(" "));
        const registries = [...new Set(refs.map((r) => parseReference(r).registry))];
        const lock = path.join(dir, "images.lock.json");
        const md = path.join(dir, "comment.md");
        const out = sink();
        const err = sink();
        const code = await main(["--stack", "prod", "--lock", lock, "--markdown", md, ...registries.flatMap((h) => ["--registry", `${h}=${fake.base}`])], out, err);
        assert.equal(code, 0, err.text);
        const data = JSON.parse(fs.readFileSync(lock, "utf8"));
        assert.deepEqual(imageLockProblems(data), []);
        assert.deepEqual(data.images.map((r: any) => r.reference), refs);
        for (const r of data.images) {
            const { repository, tag } = parseReference(r.reference);
            assert.equal(r.digest, sha(manifest(repository, tag)), r.reference);
            assert.match(r.source, /^registry [\w.:-]+: GET \/v2\/.+\/manifests\/.+ \(application\/vnd\.oci\.image\.index\.v1\+json\), SHA-256 of the bytes = Docker-Content-Digest$/);
            assert.match(r.date, /^\d{4}-\d{2}-\d{2}$/);
        }
        assert.ok(fake.seen.includes("GET /v2/library/postgres/manifests/15.10") && fake.seen.includes("GET /v2/library/postgres/manifests/15.10 (token)"), fake.seen.join("\n"));
        assert.match(fs.readFileSync(md, "utf8"), new RegExp(`\\| \`docker.io/library/postgres:15.10\` \\| \`${sha(manifest("library/postgres", "15.10"))}\` \\|`));

        const v = readStackValues("prod");
        const flat = Object.fromEntries(Object.entries(v.config).filter(([k]) => k.startsWith("ops:")).map(([k, x]) => [k.slice(4), x]));
        const cfg = loadConfig(mapSource("ops", "prod", flat, { records: data.images, digestMode: "require" }));
        assert.equal(cfg.postgres.image, `docker.io/library/postgres:15.10@${sha(manifest("library/postgres", "15.10"))}`);

        // A second run changes nothing; the record keeps its first verification.
        const before = fs.readFileSync(lock, "utf8");
        assert.equal(await main(["--stack", "prod", "--lock", lock, ...registries.flatMap((h) => ["--registry", `${h}=${fake.base}`])], sink(), sink()), 0);
        assert.equal(fs.readFileSync(lock, "utf8"), before);
    } finally {
        await fake.close();
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("a tag the registry does not have, or a digest header that does not match the bytes, fails the run and leaves the lock as it was", async () => {
    const fake = await fakeRegistry();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "images-lock-"));
    try {
        const registries = [...new Set(stackImages("prod").map((r) => parseReference(r).registry))];
        const lock = path.join(dir, "images.lock.json");
        const original = JSON.stringify({ images: [{ reference: "docker.io/library/busybox:1.37.0", digest: `sha256:${"ab".repeat(32)}`, source: "a record kept by the test", date: "2026-11-01" }] }, null, 2) + "\n";
        fs.writeFileSync(lock, original);
        fake.missing.add("library/redis:7.2.6");
        fake.lying.add("minio/mc:RELEASE.2024-11-21T17-21-54Z");
        const err = sink();
        const code = await main(["--stack", "prod", "--lock", lock, ...registries.flatMap((h) => ["--registry", `${h}=${fake.base}`])], sink(), err);
        assert.equal(code, 1);
        assert.match(err.text, /2 of \d+ image\(s\) did not resolve; images.lock.json was not changed/);
        assert.match(err.text, /docker.io\/library\/redis:7.2.6: .*\/v2\/library\/redis\/manifests\/7.2.6 answered 404 \(no such tag\)/);
        assert.match(err.text, /docker.io\/minio\/mc:RELEASE.2024-11-21T17-21-54Z: the manifest bytes hash to sha256:[0-9a-f]{64} but the registry names sha256:9{64}/);
        assert.equal(fs.readFileSync(lock, "utf8"), original);
        assert.deepEqual(fs.readdirSync(dir), ["images.lock.json"], "no temporary file left");
        assert.equal(await main(["--stack", "prod", "--lock", lock, "--registry", "nonsense"], sink(), sink()), 2);
    } finally {
        await fake.close();
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
