/**
 * npm run diff's temporary folders (<tmp>/ops-diff-XXXXXX) that an earlier diff left (killed before its worktree
 * was registered, or with no owner written because the disk was full) are named and removed by the next diff,
 * never one whose diff is alive (issue 42, class 2); a full TMPDIR is named and leaves nothing behind.
 */
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, before, test } from "node:test";
import { withWorktree } from "../cli/diff/worktree";
import { tmpfsFor } from "./backups/servers";

let tmp = "";
let repo = "";
let commit = "";
const savedTmpdir = process.env.TMPDIR;
before(() => {
    // A private TMPDIR: the diff looks at every ops-diff-* folder there, so no other run's folders are in it.
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), "diff-leftovers-"));
    repo = path.join(tmp, "repo");
    fs.mkdirSync(repo);
    const git = (...args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", env: { ...process.env, GIT_AUTHOR_NAME: "T", GIT_AUTHOR_EMAIL: "t@example.test", GIT_COMMITTER_NAME: "T", GIT_COMMITTER_EMAIL: "t@example.test" } }).trim();
    git("init", "-q", "-b", "main");
    fs.writeFileSync(path.join(repo, "a"), "a");
    git("add", ".");
    git("commit", "-q", "-m", "one");
    commit = git("rev-parse", "HEAD");
    fs.mkdirSync(path.join(tmp, "t"));
    process.env.TMPDIR = path.join(tmp, "t");
});
after(() => {
    if (savedTmpdir === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = savedTmpdir;
    fs.rmSync(tmp, { recursive: true, force: true });
});

/** Runs one diff's worktree step (as npm run diff does before its base render) and returns what it wrote to stderr. */
async function diffStep(): Promise<string> {
    const write = process.stderr.write.bind(process.stderr);
    let said = "";
    process.stderr.write = ((chunk: string | Uint8Array) => {
        said += String(chunk);
        return true;
    }) as typeof process.stderr.write;
    try {
        await withWorktree(repo, commit, async () => undefined);
    } finally {
        process.stderr.write = write;
    }
    return said;
}

/** A folder named as a diff names its own, holding an owner file when `owner` is given. */
function leftover(owner?: number | string): string {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ops-diff-"));
    fs.mkdirSync(path.join(dir, "render-abc123"));
    if (owner !== undefined) fs.writeFileSync(path.join(dir, "owner"), `${owner}\n`);
    return dir;
}

async function deadPid(): Promise<number> {
    const p = spawn(process.execPath, ["-e", ""]);
    await new Promise((r) => p.on("exit", r));
    return p.pid!;
}

test("a folder of a diff that was killed before its worktree existed is named and removed by the next diff", async () => {
    const dir = leftover(await deadPid());
    const said = await diffStep();
    assert.ok(!fs.existsSync(dir), `${dir} is left on disk`);
    assert.match(said, new RegExp(`removed ${dir.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}, left by an earlier diff that did not finish`));
});

test("a folder whose worktree a repository still lists is left to that repository's next diff, even with a dead owner", async () => {
    const dir = leftover(await deadPid());
    execFileSync("git", ["-C", repo, "worktree", "add", "--quiet", "--detach", path.join(dir, "base"), commit]);
    const other = fs.mkdtempSync(path.join(tmp, "other-"));
    execFileSync("git", ["clone", "--quiet", repo, path.join(other, "r")]);
    // a diff of another clone does not touch it
    const saved = repo;
    repo = path.join(other, "r");
    try {
        await diffStep();
    } finally {
        repo = saved;
    }
    assert.ok(fs.existsSync(path.join(dir, "base")), "another clone's diff removed it");
    // its own repository's next diff does
    await diffStep();
    assert.ok(!fs.existsSync(dir), `${dir} is left on disk`);
});

test("the folder of a diff that is alive is never removed; one without an owner only once it is older than ten minutes", async () => {
    const alive = spawn("sleep", ["30"]);
    try {
        const live = leftover(alive.pid!);
        const fresh = leftover();
        const stale = leftover();
        const old = new Date(Date.now() - 11 * 60_000);
        fs.utimesSync(stale, old, old);
        const notOurs = fs.mkdtempSync(path.join(os.tmpdir(), "ops-diff-test-"));
        await diffStep();
        assert.ok(fs.existsSync(live), "a live diff's folder was removed");
        assert.ok(fs.existsSync(fresh), "a folder whose diff may just have created it was removed");
        assert.ok(!fs.existsSync(stale), "an ownerless folder older than ten minutes is left");
        assert.ok(fs.existsSync(notOurs), "a folder not named as a diff names its own was removed");
        for (const d of [live, fresh, notOurs]) fs.rmSync(d, { recursive: true, force: true });
    } finally {
        alive.kill("SIGKILL");
    }
});

test("a full TMPDIR: the diff says so (ENOSPC) and leaves no folder behind", async (t) => {
    const disk = tmpfsFor(t, "64k");
    if (!disk) return;
    disk.fill();
    const saved = process.env.TMPDIR;
    process.env.TMPDIR = disk.dir;
    try {
        await assert.rejects(diffStep(), new RegExp(`npm run diff cannot write its temporary folder in ${disk.dir}: no space left on device \\(ENOSPC\\); set TMPDIR to a folder with room`));
    } finally {
        process.env.TMPDIR = saved;
    }
    assert.deepEqual(fs.readdirSync(disk.dir).filter((n) => n.startsWith("ops-diff-")), []);
});
