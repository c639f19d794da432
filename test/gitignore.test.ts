/** Issue 42 class 8: files the tools write inside the checkout are ignored by git, never left untracked. */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(__dirname, "..");

test("the dryrun audit log (a pack config's auditLog, a .jsonl file inside policies/) and the render's default output are ignored", (t) => {
    const inside = spawnSync("git", ["rev-parse", "--is-inside-work-tree"], { cwd: ROOT, encoding: "utf8" });
    if (inside.status !== 0) return t.skip("not a git checkout");
    for (const file of ["policies/audit.jsonl", "policies/audit/dryrun.jsonl", "out/dev/manifests.yaml"]) {
        const r = spawnSync("git", ["check-ignore", "-q", "--no-index", file], { cwd: ROOT });
        assert.equal(r.status, 0, `${file} is not ignored by .gitignore`);
    }
    assert.notEqual(spawnSync("git", ["check-ignore", "-q", "--no-index", "policies/config/dev.json"], { cwd: ROOT }).status, 0, "the pack configs stay tracked");
});
