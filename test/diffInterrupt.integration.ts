/**
 * npm run diff when interrupted (Ctrl-C, SIGTERM) removes its temporary worktree, and outside a
 * git repository it says so.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { resolveCommit } from "../cli/diff/worktree";

const REPO = path.resolve(__dirname, "..");

test("outside a git repository the diff says so (not 'fetch it first')", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "not-a-repo-"));
    assert.throws(() => resolveCommit(dir, "main"), (err: Error) => {
        assert.match(err.message, new RegExp(`${dir} is not a git repository: npm run diff compares the working tree with a revision of its git history`));
        assert.doesNotMatch(err.message, /fetch it first/);
        return true;
    });
    assert.throws(() => resolveCommit(REPO, "no-such-branch-anywhere"), /--base no-such-branch-anywhere is not a commit of .*fetch it first/);
});

/** A clone of this repository (node_modules linked in) shared by the tests below, and a diff started in it. */
let tmp: string | undefined;
let clone = "";
before(() => {
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "diff-signal-"));
    clone = path.join(tmp, "repo");
    execFileSync("git", ["clone", "--quiet", "--local", REPO, clone]);
    fs.symlinkSync(path.join(REPO, "node_modules"), path.join(clone, "node_modules"), "dir");
});
after(() => {
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
});

const worktrees = () => execFileSync("git", ["-C", clone, "worktree", "list", "--porcelain"], { encoding: "utf8" }).split("\n").filter((l) => l.startsWith("worktree "));

/** Starts `npm run diff`'s command in the clone and returns once its temporary worktree exists (the folder it names). */
async function diffWithWorktree(): Promise<{ child: ChildProcess; exited: Promise<number | null>; stderr: () => string; base: string }> {
    // One process (no npx/tsx wrapper), as the terminal's Ctrl-C reaches it.
    const child = spawn(process.execPath, ["--import", "tsx", "cli/diff.ts", "--stack", "dev", "--base", "HEAD"], { cwd: clone, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const deadline = Date.now() + 150_000;
    while (worktrees().length < 2) {
        assert.ok(Date.now() < deadline && child.exitCode === null, `the diff never created its worktree: ${stderr}`);
        await new Promise((r) => setTimeout(r, 50));
    }
    return { child, exited, stderr: () => stderr, base: worktrees()[1].slice("worktree ".length) };
}

// SIGINT (a terminal's Ctrl-C); SIGTERM takes the same handler (exit 143), not run again here to keep npm test fast.
for (const signal of ["SIGINT"] as const) {
    test(`${signal} during the diff removes the temporary worktree and exits ${signal === "SIGINT" ? 130 : 143}`, { timeout: 180_000 }, async () => {
        const { child, exited, stderr, base } = await diffWithWorktree();
        child.kill(signal);
        assert.equal(await exited, signal === "SIGINT" ? 130 : 143, stderr());
        assert.match(stderr(), new RegExp(`diff interrupted \\(${signal}\\): the temporary worktree .* was removed`));
        assert.equal(worktrees().length, 1, "the temporary worktree is still registered");
        assert.ok(!fs.existsSync(base), `${base} is left on disk`);
        assert.ok(!fs.existsSync(path.dirname(base)), `${path.dirname(base)} is left on disk`);
    });
}

test("npm run diff runs the diff in one process, so that Ctrl-C reaches its handler (tsx's wrapper SIGKILLs a busy child first)", () => {
    const scripts = JSON.parse(fs.readFileSync(path.join(REPO, "package.json"), "utf8")).scripts;
    assert.equal(scripts.diff, "node --import tsx cli/diff.ts");
});

test("a diff killed before it could clean up (SIGKILL) leaves a worktree that the next diff removes", { timeout: 180_000 }, async () => {
    const { child, exited, base: left } = await diffWithWorktree();
    child.kill("SIGKILL");
    await exited;
    assert.ok(fs.existsSync(left), "SIGKILL leaves the worktree (nothing can run then)");
    const { withWorktree } = await import("../cli/diff/worktree");
    await withWorktree(clone, execFileSync("git", ["-C", clone, "rev-parse", "HEAD"], { encoding: "utf8" }).trim(), async () => undefined);
    assert.equal(worktrees().length, 1, "the next diff removed the leftover");
    assert.ok(!fs.existsSync(path.dirname(left)), `${path.dirname(left)} is left on disk`);
});

test("a killed diff's children still writing into its worktree (git recreates leading directories) are stopped, and the folder stays gone", { timeout: 60_000 }, async () => {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "ops-diff-"));
    const base = path.join(parent, "base");
    execFileSync("git", ["-C", clone, "worktree", "add", "--quiet", "--detach", base, "HEAD"]);
    // The owner: a process that has exited.
    const dead = spawn(process.execPath, ["-e", ""]);
    await new Promise((r) => dead.on("exit", r));
    fs.writeFileSync(path.join(parent, "owner"), `${dead.pid}\n`);
    // An orphan of that diff working inside the worktree, recreating it by absolute path as git's checkout does.
    const writer = spawn("sh", ["-c", `while :; do mkdir -p '${base}/out'; sleep 0.05; done`], { cwd: base, stdio: "ignore" });
    const writerExited = new Promise((r) => writer.on("exit", r));
    try {
        const { removeStaleWorktrees } = await import("../cli/diff/worktree");
        const listed = fs.realpathSync(base);
        assert.deepEqual(removeStaleWorktrees(clone), [listed]);
        const stopped = await Promise.race([writerExited.then(() => true), new Promise((r) => setTimeout(() => r(false), 5_000))]);
        assert.ok(stopped, "the orphan writing into the worktree was not stopped");
        await new Promise((r) => setTimeout(r, 500));
        assert.ok(!fs.existsSync(parent), `${parent} came back`);
    } finally {
        writer.kill("SIGKILL");
        fs.rmSync(parent, { recursive: true, force: true });
        execFileSync("git", ["-C", clone, "worktree", "prune"]);
    }
});
