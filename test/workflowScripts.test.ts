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
import { ACTION_REDOWNLOADS, PULUMI_RELEASES, runCliStep } from "./workflowSecurity";

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
