import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { missingShared } from "./skip";

/** A test file using the helpers for data that does not exist, run by node:test in a child process. */
function runNeedingMissing(env: NodeJS.ProcessEnv) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "skip-helper-"));
    const file = path.join(dir, "needs.test.ts");
    fs.writeFileSync(
        file,
        `import { missingShared, suiteNeeding, testNeeding } from ${JSON.stringify(path.join(__dirname, "skip"))};
import { it } from "node:test";
const missing = missingShared(["no-such-folder", "cases.json"]);
testNeeding("reads the shared cases", () => { throw new Error("must not run"); }, missing);
suiteNeeding("a suite of shared cases", () => { it("one", () => { throw new Error("must not run"); }); }, missing);
`,
    );
    const { CI: _ci, NODE_TEST_CONTEXT: _ctx, ...rest } = process.env;
    return spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=spec", file], { encoding: "utf8", env: { ...rest, ...env }, cwd: path.resolve(__dirname, "..") });
}

test("missing ../shared data: each test and each suite counts as skipped, with the message", () => {
    const r = runNeedingMissing({});
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /ℹ skipped 2\n/);
    assert.match(r.stdout, /ℹ fail 0\n/);
    assert.match(r.stdout, /needs \.\.\/shared\/no-such-folder\/cases\.json \(the shared data checked out next to the repository as \.\.\/shared\)/);
});

test("missing ../shared data under CI=true: the tests fail, saying why", () => {
    const r = runNeedingMissing({ CI: "true" });
    assert.notEqual(r.status, 0);
    assert.match(r.stdout, /ℹ fail 2\n/);
    assert.match(r.stdout, /CI=true, so this is a failure, not a skip/);
});

test("present data is not reported missing", () => {
    const here = path.relative(path.resolve(__dirname, "..", "..", "shared"), __filename).split(path.sep);
    assert.equal(missingShared(here), undefined);
});
