/**
 * Silent switches of the render and diff commands (issue 30): a stack name that is a path, a
 * repeated --stack or --out that silently kept the last, a diff for a stack the base does not
 * have exiting 2 (docs/usage.md: 0, all objects added), and the base render's folder left behind
 * by an interrupted diff.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { parseArgs as diffArgs } from "../cli/diff";
import { buildReport } from "../cli/diff/report";
import { renderRevision } from "../cli/diff/worktree";
import { parseArgs as renderArgs } from "../cli/render";

test("diff: a --stack that is a path or not a stack name is refused", () => {
    for (const stack of ["../../x", "../prod", "/etc/passwd", "dev/../prod", "no-such-stack"])
        assert.throws(() => diffArgs(["--stack", stack, "--base", "main"]), /is not a stack name|no stack/, stack);
});

test("diff: the same --stack twice, and --base or --format twice, are refused", () => {
    assert.throws(() => diffArgs(["--stack", "dev", "--stack", "dev", "--base", "main"]), /--stack dev is given twice/);
    assert.throws(() => diffArgs(["--stack", "dev", "--base", "main", "--base", "HEAD~1"]), /--base is given twice/);
    assert.throws(() => diffArgs(["--stack", "dev", "--base", "main", "--format", "json", "--format=markdown"]), /--format is given twice/);
    assert.deepEqual(diffArgs(["--stack", "dev", "--stack", "prod", "--base", "main"]).stacks, ["dev", "prod"]);
});

test("render: a repeated --stack or --out is refused, not silently the last", () => {
    assert.throws(() => renderArgs(["--stack", "dev", "--stack", "prod"]), /--stack is given twice \(dev, then prod\); render one stack at a time/);
    assert.throws(() => renderArgs(["--stack", "dev", "--out", "a", "--out=b"]), /--out is given twice/);
});

test("diff: a stack the base does not have is all objects added, and its policy results are not an error", async () => {
    const base = { info: { ref: "main", commit: "abc", problems: [] }, objects: [], resources: [], absent: true };
    const head = { info: { ref: "working tree", problems: [] }, objects: [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "x", namespace: "n" } }], resources: [] };
    // The base revision has no pack config for the stack: its evaluation would throw.
    const evaluators = { base: () => Promise.reject(new Error("no policy pack config for stack new")), head: () => [] };
    const report = await buildReport("new", base, head, evaluators);
    assert.equal(report.policy.available, true, JSON.stringify(report.policy));
    assert.equal(report.objects.added.length, 1);
});

test("diff: the base render's folder is inside the diff's temporary folder, which an interrupted diff removes", async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "ops-diff-test-"));
    try {
        const dir = path.join(parent, "base");
        fs.mkdirSync(path.join(dir, "cli"), { recursive: true });
        fs.writeFileSync(path.join(dir, "cli", "render.ts"), "");
        const before = new Set(fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("ops-diff-render-")));
        const running = renderRevision(dir, "dev", 20_000);
        const leaked = fs.readdirSync(os.tmpdir()).filter((f) => f.startsWith("ops-diff-render-") && !before.has(f));
        const inside = fs.readdirSync(parent).filter((f) => f !== "base");
        await running;
        assert.deepEqual(leaked, [], "the render folder is in the system temporary folder, out of the interrupted diff's cleanup");
        assert.equal(inside.length, 1, "no render folder beside the worktree");
        assert.deepEqual(fs.readdirSync(parent), ["base"], "the render folder is removed after the render");
    } finally {
        fs.rmSync(parent, { recursive: true, force: true });
    }
});

test("explain and images:lock: a repeated flag is refused, and --stack is a stack name", async () => {
    const { parseExplainArgs } = await import("../cli/explain");
    assert.throws(() => parseExplainArgs(["--stack", "dev", "--stack", "prod"]), /--stack is given twice/);
    assert.throws(() => parseExplainArgs(["--stack", "dev", "--format", "md", "--format", "json"]), /--format is given twice/);
    assert.throws(() => parseExplainArgs(["--stack", "../../x"]), /is not a stack name/);
    const { main } = await import("../tools/images/lock");
    for (const argv of [["--stack", "dev", "--stack", "prod"], ["--stack", "dev", "--lock", "a.json", "--lock", "b.json"], ["--stack", "../../x"]]) {
        let err = "";
        const code = await main(argv, { write: () => true }, { write: (s: string) => (err += s) }, async () => {
            throw new Error("no network in this test");
        });
        assert.equal(code, 2, `${argv.join(" ")}: ${err}`);
        assert.match(err, /is given twice|is not a stack name/, argv.join(" "));
    }
});
