/**
 * npm run diff end to end (npm run test:integration): a temporary clone of this repository with two
 * commits, a real `git worktree` of the base, the CLI as a child process, each run rendering both sides.
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, describe, it } from "node:test";
import * as YAML from "yaml";

const REPO = path.resolve(__dirname, "..");

const BASE_SECRET = "base-secret-value-0001";
const HEAD_SECRET = "head-secret-value-0002";

const FIXTURE_BASE = `import * as k8s from "@pulumi/kubernetes";
new k8s.core.v1.ConfigMap("diff-fixture-removed", { metadata: { name: "diff-fixture-removed", namespace: "default" }, data: { a: "1" } });
new k8s.core.v1.ConfigMap("diff-fixture-config", { metadata: { name: "diff-fixture-config", namespace: "default" }, data: { "app.conf": "one\\ntwo\\nthree\\n" } });
new k8s.core.v1.Secret("diff-fixture-secret", { metadata: { name: "diff-fixture-secret", namespace: "default", labels: { rev: "base" } }, stringData: { token: "${BASE_SECRET}" } });
`;
const FIXTURE_HEAD = `import * as k8s from "@pulumi/kubernetes";
// A program that prints: with --format json, only the report may reach stdout.
console.log("diff fixture: printed by the program");
new k8s.core.v1.ConfigMap("diff-fixture-added", { metadata: { name: "diff-fixture-added", namespace: "default" }, data: { b: "2" } });
new k8s.core.v1.ConfigMap("diff-fixture-config", { metadata: { name: "diff-fixture-config", namespace: "default" }, data: { "app.conf": "one\\nTWO\\nthree\\n" } });
new k8s.core.v1.Secret("diff-fixture-secret", { metadata: { name: "diff-fixture-secret", namespace: "default", labels: { rev: "head" } }, stringData: { token: "${HEAD_SECRET}" } });
`;

describe("npm run diff between two commits of a clone (real git worktree)", { timeout: 1_200_000 }, () => {
    let tmp: string;
    let clone: string;
    const git = (...args: string[]) => execFileSync("git", ["-C", clone, "-c", "user.name=diff test", "-c", "user.email=diff@test.invalid", ...args], { encoding: "utf8" }).trim();
    // As `npm run diff` runs it (package.json: node --import tsx cli/diff.ts), without npm's and npx's processes.
    const runDiff = (...args: string[]) => spawnSync(process.execPath, ["--import", "tsx", "cli/diff.ts", ...args], { cwd: clone, encoding: "utf8", timeout: 400_000 });

    before(() => {
        tmp = fs.mkdtempSync(path.join(os.tmpdir(), "diff-test-"));
        clone = path.join(tmp, "repo");
        execFileSync("git", ["clone", "--quiet", "--local", "--no-hardlinks", REPO, clone]);
        fs.symlinkSync(path.join(REPO, "node_modules"), path.join(clone, "node_modules"), "dir");
        // Base commit: a fixture module with an object that will be removed, a config file and a Secret.
        fs.writeFileSync(path.join(clone, "diffFixture.ts"), FIXTURE_BASE);
        fs.appendFileSync(path.join(clone, "index.ts"), '\nimport "./diffFixture";\n');
        git("add", "diffFixture.ts", "index.ts");
        git("commit", "-q", "-m", "base");
        // Head commit: one object added, one removed, the config file and the Secret changed, and a stack config change.
        fs.writeFileSync(path.join(clone, "diffFixture.ts"), FIXTURE_HEAD);
        const stackFile = path.join(clone, "Pulumi.dev.yaml");
        const doc = YAML.parseDocument(fs.readFileSync(stackFile, "utf8"));
        doc.setIn(["config", "ops:bridgeLimitsCpu"], "300m");
        fs.writeFileSync(stackFile, doc.toString());
        git("add", "diffFixture.ts", "Pulumi.dev.yaml");
        git("commit", "-q", "-m", "head");
    });

    after(() => {
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    });

    it("reports the added, removed and changed objects with secrets redacted, as JSON, and exits 0", () => {
        const run = runDiff("--stack", "dev", "--base", "HEAD~1", "--format", "json");
        assert.equal(run.status, 0, run.stderr);
        const out = JSON.parse(run.stdout); // parseable as printed: the program's own output went to stderr
        assert.match(run.stderr, /diff fixture: printed by the program/);
        const s = out.stacks[0];
        assert.equal(s.base.commit, git("rev-parse", "HEAD~1"));
        const names = (refs: Array<{ kind: string; name: string }>) => refs.map((r) => `${r.kind} ${r.name}`);
        assert.deepEqual(names(s.objects.added), ["ConfigMap diff-fixture-added"]);
        assert.deepEqual(names(s.objects.removed), ["ConfigMap diff-fixture-removed"]);
        assert.ok(names(s.objects.changed).includes("ConfigMap diff-fixture-config"));
        const secretChange = s.objects.changed.find((c: { kind: string }) => c.kind === "Secret");
        assert.deepEqual(secretChange.changes.map((c: { path: string }) => c.path), ["metadata.labels.rev"]);
        const cpu = s.objects.changed.flatMap((c: { kind: string; changes: Array<{ path: string; new?: unknown }> }) => (c.kind === "Deployment" ? c.changes : [])).find((c: { path: string }) => c.path.endsWith(".resources.limits.cpu"));
        assert.equal(cpu?.new, "300m", "the stack config change reaches the bridge Deployment");
        assert.ok(!run.stdout.includes(BASE_SECRET) && !run.stdout.includes(HEAD_SECRET), "a secret value leaked");
        assert.equal(s.policy.available, fs.existsSync(path.join(clone, "policies", "pack", "run.ts")), "the pack's in-process evaluation is used when the revision has it");
        assert.equal(git("worktree", "list").split("\n").length, 1, "the temporary worktree was removed");
    });

    it("prints the Markdown report for a pull-request comment", () => {
        const run = runDiff("--stack", "dev", "--base", "HEAD~1");
        assert.equal(run.status, 0, run.stderr);
        assert.match(run.stdout, /### Stack `dev`: 1 added, 1 removed, \d+ changed/);
        assert.ok(run.stdout.includes('```diff\n# data["app.conf"]\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three\n'), run.stdout);
        assert.ok(run.stdout.includes(`| changed | Secret | default | diff-fixture-secret |`));
        assert.ok(!run.stdout.includes(BASE_SECRET) && !run.stdout.includes(HEAD_SECRET));
    });

    it("exits non-zero, saying why, when the base cannot be rendered or is not a commit", () => {
        // A base without the render tool.
        fs.rmSync(path.join(clone, "cli", "render.ts"));
        git("commit", "-q", "-a", "-m", "no render tool");
        const noTool = runDiff("--stack", "dev", "--base", "HEAD");
        git("revert", "--no-edit", "HEAD");
        assert.equal(noTool.status, 2);
        assert.match(noTool.stdout, /not diffed\n\n:warning: the base revision HEAD \([0-9a-f]{12}\) could not be rendered: the base revision has no render tool/);

        const badRef = runDiff("--stack", "dev", "--base", "no-such-branch");
        assert.equal(badRef.status, 2);
        assert.match(badRef.stderr, /--base no-such-branch is not a commit/);
        assert.equal(git("worktree", "list").split("\n").length, 1, "no worktree is left behind");
    });
});
