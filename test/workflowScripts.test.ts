/**
 * The scripts the pull-request pipelines run on what a pull request produced
 * (.github/scripts/images-lock-artifact.ts, .github/scripts/comment-body.ts), against hostile
 * inputs: an artifact that is not one regular lock file, a report that tries to mention, link,
 * format or size itself into a verdict of the pipeline. And the step that installs the Pulumi CLI
 * before pulumi/actions, against a swapped, unlisted or doubly listed tarball.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it } from "node:test";
import { GITHUB_COMMENT_LIMIT, MARKER, MAX_REPORT, commentBody } from "../.github/scripts/comment-body";
import { installLockArtifact, LOCK_NAME, MAX_BYTES } from "../.github/scripts/images-lock-artifact";
import * as YAML from "yaml";
import { ACTION_REDOWNLOADS, approvalsAnswer, GhAnswer, ghApiStub, prContext, PULUMI_RELEASES, pullAnswer, runCliStep, runScriptFull, stepEnv } from "./workflowSecurity";

const ROOT = path.resolve(__dirname, "..");
const LOCK = fs.readFileSync(path.join(ROOT, "images.lock.json"), "utf8");

function tmp(): string {
    return fs.mkdtempSync(path.join(os.tmpdir(), "wf-scripts-"));
}

describe("images-lock-artifact.ts: the images-lock artifact taken in as data", () => {
    const setup = (fill: (dir: string) => void) => {
        const base = tmp();
        const dir = path.join(base, "download");
        fs.mkdirSync(dir);
        fill(dir);
        const dest = path.join(base, "work", LOCK_NAME);
        fs.mkdirSync(path.dirname(dest));
        fs.writeFileSync(dest, "the committed lock\n");
        return { base, dir, dest };
    };

    it("copies exactly one regular, well-formed images.lock.json in by rename", () => {
        const { base, dir, dest } = setup((d) => fs.writeFileSync(path.join(d, LOCK_NAME), LOCK));
        try {
            assert.equal(installLockArtifact(dir, dest), JSON.parse(LOCK).images.length);
            assert.deepEqual(JSON.parse(fs.readFileSync(dest, "utf8")), JSON.parse(LOCK));
            assert.deepEqual(fs.readdirSync(path.dirname(dest)), [LOCK_NAME], "no temporary file left behind");
        } finally {
            fs.rmSync(base, { recursive: true, force: true });
        }
    });

    const refused: Array<[string, (d: string) => void, RegExp]> = [
        ["a planted program beside the lock", (d) => { fs.writeFileSync(path.join(d, LOCK_NAME), LOCK); fs.writeFileSync(path.join(d, "index.ts"), "process.exit(0)"); }, /expected exactly one file/],
        ["a planted node_modules folder beside the lock", (d) => { fs.writeFileSync(path.join(d, LOCK_NAME), LOCK); fs.mkdirSync(path.join(d, "node_modules", "x"), { recursive: true }); }, /expected exactly one file/],
        ["a folder named images.lock.json", (d) => fs.mkdirSync(path.join(d, LOCK_NAME)), /is a folder; expected a regular file/],
        ["a symbolic link named images.lock.json", (d) => fs.symlinkSync("/etc/passwd", path.join(d, LOCK_NAME)), /symbolic link; expected a regular file/],
        ["another name", (d) => fs.writeFileSync(path.join(d, "lock.json"), LOCK), /expected exactly one file, images\.lock\.json/],
        ["an empty artifact", () => undefined, /holds \[\]/],
        ["not JSON", (d) => fs.writeFileSync(path.join(d, LOCK_NAME), "module.exports = 1"), /not JSON/],
        ["JSON of another shape", (d) => fs.writeFileSync(path.join(d, LOCK_NAME), JSON.stringify({ images: [{ reference: "x", digest: "y" }] })), /not an image lock[\s\S]*images\[0\]\.reference/],
        ["a digest that is not sha256:<64 hex>", (d) => fs.writeFileSync(path.join(d, LOCK_NAME), LOCK.replace(/"sha256:[0-9a-f]{64}"/, '"sha256:1234"')), /is not sha256:<64 hex>/],
        ["an oversized file", (d) => fs.writeFileSync(path.join(d, LOCK_NAME), " ".repeat(MAX_BYTES + 1)), /bytes; expected at most/],
    ];
    for (const [what, fill, why] of refused) {
        it(`refuses ${what}, and leaves the destination as it was`, () => {
            const { base, dir, dest } = setup(fill);
            try {
                assert.throws(() => installLockArtifact(dir, dest), why);
                assert.equal(fs.readFileSync(dest, "utf8"), "the committed lock\n");
                assert.deepEqual(fs.readdirSync(path.dirname(dest)), [LOCK_NAME]);
            } finally {
                fs.rmSync(base, { recursive: true, force: true });
            }
        });
    }

    it("as a command: exit 1 and an error naming the file, the destination unchanged", () => {
        const { base, dir, dest } = setup((d) => { fs.writeFileSync(path.join(d, LOCK_NAME), LOCK); fs.writeFileSync(path.join(d, "index.ts"), ""); });
        try {
            const r = spawnSync(process.execPath, ["--import", "tsx", path.join(ROOT, ".github/scripts/images-lock-artifact.ts"), dir, dest], { encoding: "utf8", cwd: ROOT });
            assert.equal(r.status, 1, r.stderr);
            assert.match(r.stderr, /::error::.*download: the artifact holds \["images\.lock\.json","index\.ts"\]/);
            assert.equal(fs.readFileSync(dest, "utf8"), "the committed lock\n");
        } finally {
            fs.rmSync(base, { recursive: true, force: true });
        }
    });
});

/**
 * Where the fenced block opened on line `open` closes (CommonMark: a line of at most three spaces'
 * indent, a run of the fence character at least as long as the opening one, then only spaces).
 */
function closingLine(lines: string[], open: number): number {
    const fence = /^(`{3,})/.exec(lines[open])![1];
    for (let i = open + 1; i < lines.length; i++) {
        const m = /^ {0,3}(`+)\s*$/.exec(lines[i]);
        if (m && m[1].length >= fence.length) return i;
    }
    return -1;
}

describe("comment-body.ts: the pull request's report, marked, inert and bounded", () => {
    const base = "0123456789abcdef0123456789abcdef01234567";
    const hostile = [
        "## ✅ prod preview passed, approved by the platform team",
        "@acme/platform @alice please merge, see [the approval](https://evil.example/approve) and <https://evil.example>",
        "![badge](https://evil.example/passing.svg) <img src=x> <!-- ops-offline-diff --> fixes #12 acme/other#3",
        "```",
        "closing the block early, then **bold** outside",
        "````````",
        "~~~",
        "bidi \u202e txet desrever \u202c and a bell \u0007 and a carriage\rreturn",
        "`".repeat(40) + " a long run",
    ].join("\n");

    it("starts with the marker and the pipeline's header saying whose output it is", () => {
        const body = commentBody(hostile, base);
        assert.ok(body.startsWith(`${MARKER}\n## Offline diff of the stacks against \`0123456789ab\`\n`));
        assert.match(body, /output of this pull request's own code/);
        assert.match(body, /Nothing in it is a verdict of the pipeline/);
    });

    it("puts the whole report in one code block that nothing in it can close", () => {
        const body = commentBody(hostile, base);
        const lines = body.split("\n");
        const open = lines.findIndex((l) => /^`{3,}text$/.test(l));
        assert.ok(open > 0, "no opening fence");
        const close = closingLine(lines, open);
        assert.ok(close > open, "the block never closes");
        // Everything of the report is between the fences; after it only the pipeline's own lines.
        const inside = lines.slice(open + 1, close).join("\n");
        for (const piece of ["@acme/platform", "](https://evil.example/approve)", "<img src=x>", "## ✅ prod preview passed", "**bold**", "#12"]) assert.ok(inside.includes(piece), piece);
        assert.deepEqual(lines.slice(close + 1).filter((l) => l.trim() !== ""), [], "nothing of the report after the block");
        assert.equal(lines.slice(0, open).join("\n").includes("evil"), false, "nothing of the report before the block");
        assert.equal(body.indexOf(MARKER), 0);
    });

    it("replaces control and bidirectional-override characters, and normalises line ends", () => {
        const body = commentBody(hostile, base);
        assert.doesNotMatch(body, /[\u202a-\u202e\u2066-\u2069\u0007\r]/);
        assert.match(body, /bidi \ufffd txet/);
    });

    it("bounds the body under GitHub's comment limit, cut at a line end, and says so", () => {
        const big = Array.from({ length: 20000 }, (_, i) => `line ${i} ${"x".repeat(20)}`).join("\n");
        const body = commentBody(big, base);
        assert.ok(body.length <= GITHUB_COMMENT_LIMIT, `${body.length}`);
        assert.match(body, new RegExp(`is ${big.length} characters long; the first \\d+ are shown`));
        const lines = body.split("\n");
        const open = lines.findIndex((l) => /^`{3,}text$/.test(l));
        const shown = lines.slice(open + 1, closingLine(lines, open));
        assert.ok(shown.join("\n").length <= MAX_REPORT);
        assert.match(shown[shown.length - 1], /^line \d+ x{20}$/, "cut at a line end");
        // A report of backticks only stays bounded too (the fence does not grow with it).
        assert.ok(commentBody("`".repeat(200000), base).length <= GITHUB_COMMENT_LIMIT);
    });

    it("refuses a base that is not a commit", () => {
        assert.throws(() => commentBody("x", "main"), /expected the base commit/);
    });
});

describe("the Pulumi CLI step (before every pulumi/actions): the tarball its release's checksums file lists", () => {
    const dir = path.join(ROOT, ".github/workflows");
    const cliSteps: Array<{ where: string; run: string; env: Record<string, string> }> = [];
    for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".yml"))) {
        const doc = YAML.parse(fs.readFileSync(path.join(dir, file), "utf8"));
        for (const [job, def] of Object.entries<{ steps?: Array<{ env?: Record<string, string>; run?: string; uses?: string }> }>(doc.jobs ?? {})) {
            for (const s of def.steps ?? []) if (s.env?.RELEASES !== undefined) cliSteps.push({ where: `${file} job ${job}`, run: String(s.run), env: s.env });
        }
    }
    const listed = (sum: string) => `${sum}  pulumi-v3.1.4-linux-x64.tar.gz\n`;

    it("is one script, in each of the seven jobs that run pulumi/actions, naming get.pulumi.com and /usr/local/bin", () => {
        assert.equal(cliSteps.length, 7, cliSteps.map((s) => s.where).join(", "));
        assert.equal(new Set(cliSteps.map((s) => s.run)).size, 1, "the copies differ");
        for (const s of cliSteps) assert.deepEqual(s.env, { RELEASES: PULUMI_RELEASES, BIN: "/usr/local/bin" }, s.where);
    });

    it("installs the listed tarball and writes its sha256 to the job summary", () => {
        const r = runCliStep(cliSteps[0].run, listed);
        assert.equal(r.status, 0, r.output);
        assert.ok(r.installed);
        assert.match(r.summary, new RegExp(`^Pulumi CLI 3\\.1\\.4: pulumi-v3\\.1\\.4-linux-x64\\.tar\\.gz, sha256 ${r.sha256} `));
    });

    it("refuses a swapped tarball, saying which file and which sha256, and installs nothing", () => {
        const r = runCliStep(cliSteps[0].run, () => listed("e".repeat(64)));
        assert.notEqual(r.status, 0);
        assert.equal(r.installed, false);
        assert.match(r.output, new RegExp(`::error::pulumi-v3\\.1\\.4-linux-x64\\.tar\\.gz does not have the sha256 ${"e".repeat(64)} of pulumi-3\\.1\\.4-checksums\\.txt: not installed`));
        assert.equal(r.summary, "");
    });

    it("refuses a tarball the checksums file does not list, or lists twice", () => {
        for (const checksums of [(sum: string) => `${sum}  pulumi-v3.1.4-darwin-x64.tar.gz\n`, (sum: string) => listed(sum) + listed("e".repeat(64)), () => ""]) {
            const r = runCliStep(cliSteps[0].run, checksums);
            assert.notEqual(r.status, 0);
            assert.equal(r.installed, false);
            assert.match(r.output, /::error::pulumi-3\.1\.4-checksums\.txt has no single sha256 for pulumi-v3\.1\.4-linux-x64\.tar\.gz: not installed/);
        }
    });

    it("refuses a .pulumi.version that is not a version, naming the file and the expected form", () => {
        const r = runCliStep(cliSteps[0].run, listed, { version: "latest" });
        assert.notEqual(r.status, 0);
        assert.equal(r.installed, false);
        assert.match(r.output, /::error::\.pulumi\.version: expected a version like 3\.259\.0, got 'latest'/);
    });

    it("refuses the versions pulumi/actions downloads over even when they are on PATH", () => {
        for (const version of ACTION_REDOWNLOADS) {
            const r = runCliStep(cliSteps[0].run, listed, { version });
            assert.notEqual(r.status, 0);
            assert.equal(r.installed, false);
            assert.match(r.output, new RegExp(`::error::\\.pulumi\\.version: pulumi/actions v7\\.0\\.0 downloads its own CLI, unchecked, over ${version.replace(/\./g, "\\.")} `));
        }
    });

    it("fails when the checked binary reports another version than .pulumi.version (pulumi/actions would download its own)", () => {
        const r = runCliStep(cliSteps[0].run, listed, { reports: "v3.1.3" });
        assert.notEqual(r.status, 0);
        assert.match(r.output, /::error::.*\/bin\/pulumi reports 'v3\.1\.3', not v3\.1\.4: pulumi\/actions would download its own/);
        assert.equal(r.summary, "");
    });

    it("fails when another pulumi comes first on PATH (pulumi/actions would run that one)", () => {
        const r = runCliStep(cliSteps[0].run, listed, { shadow: true });
        assert.notEqual(r.status, 0);
        assert.match(r.output, /::error::pulumi on PATH is not the checked .*\/bin\/pulumi: pulumi\/actions would run another one/);
        assert.equal(r.summary, "");
    });
});

describe("the gh stub the workflow model runs steps against: it answers what the query asks", () => {
    const gh = ghApiStub({
        "repos/acme/ops/pulls/7": pullAnswer(7, { author: "alice" }),
        "repos/acme/ops/actions/runs/99/approvals": approvalsAnswer([["bob", "approved"], ["alice", "approved"], ["carol", "rejected"]]),
        "repos/acme/ops/commits/main": { httpStatus: 502, message: "Bad Gateway" },
    });
    const ask = (args: string) => runScriptFull(`gh ${args}`, {}, { gh });
    it("evaluates each --jq query with jq: different queries of one answer give different results", () => {
        assert.equal(ask("api repos/acme/ops/pulls/7 --jq .user.login").log, "alice\n");
        assert.equal(ask("api repos/acme/ops/pulls/7 --jq .head.sha").log, `${"c".repeat(40)}\n`);
        assert.equal(ask(`api repos/acme/ops/actions/runs/99/approvals --jq '[.[] | select(.state == "approved") | .user.login] | join(" ")'`).log, "bob alice\n");
        assert.equal(ask("api repos/acme/ops/actions/runs/99/approvals --jq '.[0].user.login'").log, "bob\n");
    });
    it("prints as gh does: strings raw, null as an empty line, numbers and booleans as text, objects as compact JSON", () => {
        assert.equal(ask("api repos/acme/ops/pulls/7 --jq .milestone").log, "\n");
        assert.equal(ask("api repos/acme/ops/pulls/7 --jq '.number, .draft'").log, "7\nfalse\n");
        assert.equal(ask("api repos/acme/ops/pulls/7 --jq .base.repo").log, '{"full_name":"acme/ops"}\n');
    });
    it("fails as gh does: 404 for an endpoint it has no answer for, the fixture's HTTP error, an invalid query", () => {
        const missing = ask("api repos/acme/ops/pulls/8 --jq .state");
        assert.equal(missing.status, 1);
        assert.match(missing.log, /Not Found \(HTTP 404\)/);
        const down = ask("api repos/acme/ops/commits/main --jq .sha");
        assert.equal(down.status, 1);
        assert.match(down.log, /Bad Gateway \(HTTP 502\)/);
        assert.notEqual(ask("api repos/acme/ops/pulls/7 --jq '[['").status, 0);
        assert.equal(ask("pr checkout 7").status, 2, "only gh api is modelled");
    });
});

describe("preview-prod.yml: the approval binds to the pull request's current head (the real steps, against GitHub's answers)", () => {
    const doc = YAML.parse(fs.readFileSync(path.join(ROOT, ".github/workflows/preview-prod.yml"), "utf8"));
    const binderJob = doc.jobs["pull-request"];
    const binder = binderJob.steps.find((s: { id?: string }) => s.id === "head");
    const approvalJob = doc.jobs["preview-prod"];
    const recheck = approvalJob.steps[0];
    const C = "c".repeat(40);
    const D = "d".repeat(40);
    const pulls = (...prs: Array<[number, Parameters<typeof pullAnswer>[1]]>) => Object.fromEntries(prs.map(([n, o]) => [`repos/acme/ops/pulls/${n}`, pullAnswer(n, o)]));
    const confirm = (numbers: number[], fixtures: Record<string, GhAnswer>) => runScriptFull(binder.run, stepEnv(binder, binderJob, doc, prContext("member", "success", numbers.map((number) => ({ number })))), { gh: ghApiStub(fixtures) });
    const approve = (fixtures: Record<string, GhAnswer>, number = "7") => runScriptFull(recheck.run, stepEnv(recheck, approvalJob, doc, prContext("member", "success", [{ number: 7 }], { number })), { gh: ghApiStub(fixtures) });
    const approvals = { "repos/acme/ops/actions/runs/99/approvals": approvalsAnswer([["bob", "approved"]]) };

    it("asks for an approval of the current head of an open pull request into main, and names it", () => {
        const r = confirm([7], pulls([7, {}]));
        assert.equal(r.status, 0, r.log);
        assert.equal(r.outputs.number, "7");
        assert.equal(approve({ ...pulls([7, {}]), ...approvals }).status, 0);
        assert.match(approvalJob.name, /needs\.pull-request\.outputs\.number/);
        assert.equal(approvalJob.concurrency.group, "preview-prod-pr-${{ needs.pull-request.outputs.number }}");
        assert.equal(doc.concurrency, undefined, "no workflow-level group: a skipped or stale run would cancel the pending approval");
    });
    it("a re-run of a stale run (the pull request has moved on): nothing to approve", () => {
        const r = confirm([7], pulls([7, { head: D }]));
        assert.equal(r.status, 1);
        assert.equal(r.outputs.number, undefined);
        assert.match(r.log, new RegExp(`#7 \\(alice\\) is open, into main, at ${D}`));
    });
    it("a force-push: the old commit names no pull request, or one whose head is another commit: nothing to approve", () => {
        assert.equal(confirm([], {}).status, 1);
        assert.equal(confirm([7], pulls([7, { head: D }])).status, 1);
        // and a force-push while the approval waited stops the approved job before the checkout
        const r = approve({ ...pulls([7, { head: D }]), ...approvals });
        assert.equal(r.status, 1);
        assert.match(r.log, new RegExp(`#7 is now open, into main, at ${D} of acme/ops; the approval was for ${C}`));
    });
    it("a closed pull request: nothing to approve, and a close while the approval waited stops the job", () => {
        assert.equal(confirm([7], pulls([7, { state: "closed" }])).status, 1);
        assert.equal(approve({ ...pulls([7, { state: "closed" }]), ...approvals }).status, 1);
    });
    it("two pull requests of one branch: the one this commit heads into main, not the first GitHub matched", () => {
        const r = confirm([6, 7], pulls([6, { base: "release", author: "bob" }], [7, {}]));
        assert.equal(r.status, 0, r.log);
        assert.equal(r.outputs.number, "7");
        assert.equal(confirm([6, 7], pulls([6, {}], [7, {}])).status, 1, "two open pull requests into main with this head: ambiguous");
    });
    it("a pull request from another repository or into another branch, and an API that fails: nothing to approve", () => {
        assert.equal(confirm([7], pulls([7, { repo: "mallory/ops" }])).status, 1);
        assert.equal(confirm([7], pulls([7, { repo: null }])).status, 1, "a fork deleted since: head.repo is null");
        assert.equal(confirm([7], pulls([7, { base: "release" }])).status, 1);
        assert.equal(confirm([7], { "repos/acme/ops/pulls/7": { httpStatus: 502, message: "Bad Gateway" } }).status, 1);
    });
    it("after the approval: refuses the author among the approvers (wherever in the history), a rejection, no approver, no answer", () => {
        const fresh = pulls([7, {}]);
        const withApprovals = (entries: Array<[string, string, string?]>) => ({ ...fresh, "repos/acme/ops/actions/runs/99/approvals": approvalsAnswer(entries) });
        assert.equal(approve(withApprovals([["bob", "approved"], ["alice", "approved"]])).status, 1);
        assert.equal(approve(withApprovals([["bob", "rejected"]])).status, 1);
        assert.equal(approve(withApprovals([["carol", "approved", "preview-dev"]])).status, 1);
        assert.equal(approve(withApprovals([])).status, 1);
        assert.equal(approve({ ...fresh, "repos/acme/ops/actions/runs/99/approvals": { httpStatus: 502, message: "Bad Gateway" } }).status, 1);
        assert.equal(approve({ ...fresh, ...approvals }, "").status, 1, "no confirmed pull request");
    });
});

describe("provider-plugins.ts: the plugins the program asks for, from checked sources only", () => {
    const script = path.join(ROOT, ".github/scripts/provider-plugins.ts");
    const { createHash } = require("node:crypto") as typeof import("node:crypto");
    /** A node_modules with packages declaring resource plugins, a served release folder, a pulumi that records its calls. */
    async function run(plugins: Record<string, string>, serve: (files: Map<string, Buffer>) => void, kubernetesBuilt = true): Promise<{ status: number | null; output: string; installed: string[] }> {
        const root = tmp();
        const nm = path.join(root, "node_modules", "@pulumi");
        for (const [name, version] of Object.entries(plugins)) {
            fs.mkdirSync(path.join(nm, name), { recursive: true });
            fs.writeFileSync(path.join(nm, name, "package.json"), JSON.stringify({ name: `@pulumi/${name}`, version, pulumi: { resource: true, name, version } }));
        }
        const cache = path.join(root, "e2e-cache");
        if (kubernetesBuilt) {
            fs.mkdirSync(path.join(cache, "pulumi-resource-kubernetes-4.25.0"), { recursive: true });
            fs.writeFileSync(path.join(cache, "pulumi-resource-kubernetes-4.25.0", "pulumi-resource-kubernetes"), "#!/bin/sh\n", { mode: 0o755 });
        }
        const bin = path.join(root, "bin");
        fs.mkdirSync(bin);
        fs.writeFileSync(path.join(bin, "pulumi"), `#!/bin/sh\necho "$*" >> "${root}/pulumi-calls"\n`, { mode: 0o755 });
        const files = new Map<string, Buffer>();
        serve(files);
        const http = await import("node:http");
        const server = http.createServer((req, res) => { const b = files.get(req.url ?? ""); res.writeHead(b ? 200 : 404); res.end(b ?? "not found"); });
        await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
        const base = `http://127.0.0.1:${(server.address() as import("node:net").AddressInfo).port}`;
        try {
            const { spawn } = await import("node:child_process");
            const child = spawn(process.execPath, ["--import", "tsx", script, "--node-modules", path.join(root, "node_modules")], { env: { ...process.env, PATH: `${bin}:${process.env.PATH}`, OPS_E2E_CACHE: cache, OPS_PLUGIN_RELEASES: `${base}/releases`, OPS_PLUGIN_GITHUB: `${base}/github`, GITHUB_STEP_SUMMARY: "" } });
            let output = "";
            child.stdout.on("data", (d) => (output += d));
            child.stderr.on("data", (d) => (output += d));
            const status = await new Promise<number | null>((r) => child.on("close", r));
            const calls = fs.existsSync(path.join(root, "pulumi-calls")) ? fs.readFileSync(path.join(root, "pulumi-calls"), "utf8").trim().split("\n") : [];
            return { status, output, installed: calls.map((c) => c.replace(/ --file \S+/, "")) };
        } finally {
            server.close();
            fs.rmSync(root, { recursive: true, force: true });
        }
    }
    const tarball = (name: string, v: string) => `pulumi-resource-${name}-v${v}-linux-amd64.tar.gz`;
    const release = (files: Map<string, Buffer>, name: string, v: string, list?: (sha1: string) => string) => {
        const body = Buffer.from(`a tarball of ${name} ${v}`);
        files.set(`/releases/${tarball(name, v)}`, body);
        const sha1 = createHash("sha1").update(body).digest("hex");
        files.set(`/github/pulumi/pulumi-${name}/releases/download/v${v}/pulumi-${name}_${v}_checksums.txt`, Buffer.from(list ? list(sha1) : `${"0".repeat(40)}  ./pulumi-resource-${name}-v${v}-darwin-amd64.tar.gz\n${sha1}  ./${tarball(name, v)}\n`));
    };
    const skipOff = process.platform !== "linux" || process.arch !== "x64";

    it("installs kubernetes as tools/e2e/build.sh built it, random and tls as their GitHub releases list them", { skip: skipOff && "linux-amd64 only" }, async () => {
        const r = await run({ kubernetes: "4.25.0", random: "4.21.2", tls: "5.6.1" }, (f) => { release(f, "random", "4.21.2"); release(f, "tls", "5.6.1"); });
        assert.equal(r.status, 0, r.output);
        assert.deepEqual(r.installed, ["plugin install resource kubernetes 4.25.0 --reinstall", "plugin install resource random 4.21.2 --reinstall", "plugin install resource tls 5.6.1 --reinstall"]);
        assert.match(r.output, /random 4\.21\.2: pulumi-resource-random-v4\.21\.2-linux-amd64\.tar\.gz from .*, sha1 [0-9a-f]{40} as listed by .*pulumi-random_4\.21\.2_checksums\.txt/);
        assert.match(r.output, /kubernetes 4\.25\.0: built from the Go module proxy at github\.com\/pulumi\/pulumi-kubernetes\/provider\/v4@v4\.0\.0-20260115033456-f47bc2d6f199/);
    });
    it("refuses a swapped tarball, naming it and both checksums, and installs nothing of it", { skip: skipOff && "linux-amd64 only" }, async () => {
        const r = await run({ random: "4.21.2" }, (f) => { release(f, "random", "4.21.2"); f.set(`/releases/${tarball("random", "4.21.2")}`, Buffer.from("another tarball")); });
        assert.equal(r.status, 1);
        assert.match(r.output, /::error::pulumi-resource-random-v4\.21\.2-linux-amd64\.tar\.gz from .* has the sha1 [0-9a-f]{40}, not the [0-9a-f]{40} its GitHub release lists/);
        assert.deepEqual(r.installed, []);
    });
    it("refuses a checksums file that does not list the tarball, or lists it twice, or has no checksums file", { skip: skipOff && "linux-amd64 only" }, async () => {
        for (const list of [() => "", (sum: string) => `${sum}  ./${tarball("tls", "5.6.1")}\n${"f".repeat(40)}  ${tarball("tls", "5.6.1")}\n`]) {
            const r = await run({ tls: "5.6.1" }, (f) => release(f, "tls", "5.6.1", list));
            assert.equal(r.status, 1);
            assert.match(r.output, /checksums for pulumi-resource-tls-v5\.6\.1-linux-amd64\.tar\.gz; expected exactly one/);
            assert.deepEqual(r.installed, []);
        }
        const none = await run({ tls: "5.6.1" }, () => undefined);
        assert.equal(none.status, 1);
        assert.match(none.output, /pulumi-tls_5\.6\.1_checksums\.txt: HTTP 404/);
    });
    it("refuses a plugin without a checked source, and a kubernetes version other than the one tools/e2e/lib.sh records", async () => {
        const aws = await run({ aws: "6.0.0" }, () => undefined);
        assert.equal(aws.status, 1);
        assert.match(aws.output, /the resource plugin aws 6\.0\.0 has no checked source/);
        const k8s = await run({ kubernetes: "4.26.0" }, () => undefined, false);
        assert.equal(k8s.status, 1);
        assert.match(k8s.output, /kubernetes 4\.26\.0, but tools\/e2e\/lib\.sh records the kubernetes provider 4\.25\.0/);
        assert.deepEqual(k8s.installed, []);
    });
});
