/**
 * `npm run render -- --out DIR` writes only where it was asked and only what it owns (issue 22):
 * a new or empty folder, or one a previous render wrote (its marker file), never the repository,
 * a parent of it or an arbitrary folder; the stack is a name; modes follow the umask; leftovers of
 * a killed run are cleaned; a stale lock is taken by one render only.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { parseArgs } from "../cli/render";
import { checkOutTarget, lockOutput, OutputError, prepareOutput, RENDER_MARKER, writeOutputAtomically } from "../cli/harness/output";

const ROOT = path.resolve(__dirname, "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");
const tmpParent = () => fs.mkdtempSync(path.join(os.tmpdir(), "render-safety-"));
const files = { "manifests.yaml": "kind: Namespace\n", "resources.json": "[]\n" };

test("an empty --out (unset variable or --out=) is refused, not taken as the current folder", () => {
    assert.throws(() => parseArgs(["--stack", "dev", "--out", ""]), /--out needs a folder name; got an empty value/);
    assert.throws(() => parseArgs(["--stack", "dev", "--out="]), /--out needs a folder name; got an empty value/);
    assert.throws(() => parseArgs(["--stack", "", "--out", "x"]), /--stack needs/);
});

test("--stack is a stack name, not a path: ../../x and unknown stacks are refused before anything is written", () => {
    assert.throws(() => parseArgs(["--stack", "../../x"]), /--stack "\.\.\/\.\.\/x" is not a stack name; stacks are ci, dev, prod/);
    assert.throws(() => parseArgs(["--stack", "nope"]), /no stack "nope" \(no Pulumi\.nope\.yaml\); stacks are ci, dev, prod/);
    assert.deepEqual(parseArgs(["--stack", "dev"]), { stack: "dev", out: undefined });
});

test("the repository, a parent of it, and a non-empty folder without a render marker are refused, untouched", () => {
    for (const dir of [ROOT, path.dirname(ROOT), "/"])
        assert.throws(() => prepareOutput(dir), new RegExp(`--out ${dir.replace(/[/.]/g, "\\$&")} is the repository or a folder that contains it; .*nothing was rendered or written`));
    const docs = path.join(ROOT, "docs");
    const before = fs.readdirSync(docs).sort();
    assert.throws(() => prepareOutput(docs), /docs holds files that no render wrote \(.*\.md.*\) and no \.rendered marker; .*nothing was rendered or written/);
    assert.throws(() => writeOutputAtomically(docs, files), /holds files that no render wrote/);
    assert.deepEqual(fs.readdirSync(docs).sort(), before);
    assert.ok(!fs.existsSync(path.join(ROOT, ".docs.lock")));
});

test("the CLI refuses an empty --out, --out . and --out docs with exit 2 before rendering, and the folders stay as they were", () => {
    // Run from a scratch folder (with a docs/ of its own), so that a regression cannot touch the repository.
    const cwd = tmpParent();
    fs.writeFileSync(path.join(cwd, "work.txt"), "uncommitted work\n");
    fs.mkdirSync(path.join(cwd, "docs"));
    fs.writeFileSync(path.join(cwd, "docs", "usage.md"), "# usage\n");
    for (const out of [".", "docs", ""]) {
        const cli = spawnSync(TSX, [path.join(ROOT, "cli", "render.ts"), "--stack", "dev", "--out", out], { cwd, encoding: "utf8", timeout: 60_000 });
        assert.equal(cli.status, 2, `--out "${out}": ${cli.stdout}${cli.stderr}`);
        assert.match(cli.stderr, /render failed: (--out needs a folder name|cannot write the render to .*holds files that no render wrote)/);
        assert.doesNotMatch(cli.stdout, /stack dev:/, "refused before rendering");
    }
    assert.deepEqual(fs.readdirSync(cwd).sort(), ["docs", "work.txt"]);
    assert.deepEqual(fs.readdirSync(path.join(cwd, "docs")), ["usage.md"]);
});

test("a new, an empty, and a previously rendered folder are accepted; the render writes its marker", () => {
    const parent = tmpParent();
    const out = path.join(parent, "new");
    writeOutputAtomically(out, files);
    assert.ok(fs.readFileSync(path.join(out, RENDER_MARKER), "utf8").includes("npm run render"));
    writeOutputAtomically(out, files); // holds the marker: replaced
    fs.mkdirSync(path.join(parent, "empty"));
    writeOutputAtomically(path.join(parent, "empty"), files);
    assert.deepEqual(fs.readdirSync(path.join(parent, "empty")).sort(), [RENDER_MARKER, "manifests.yaml", "resources.json"].sort());
});

test("a symlinked --out stays a symlink: the render goes into its target", () => {
    const parent = tmpParent();
    fs.mkdirSync(path.join(parent, "real"));
    fs.symlinkSync("real", path.join(parent, "link"));
    prepareOutput(path.join(parent, "link"))();
    writeOutputAtomically(path.join(parent, "link"), files);
    writeOutputAtomically(path.join(parent, "link"), files);
    assert.ok(fs.lstatSync(path.join(parent, "link")).isSymbolicLink());
    assert.equal(fs.readFileSync(path.join(parent, "real", "manifests.yaml"), "utf8"), files["manifests.yaml"]);
    assert.deepEqual(fs.readdirSync(parent).sort(), ["link", "real"]);
});

test("folders and files follow the umask (not 0700)", () => {
    const parent = tmpParent();
    const old = process.umask(0o022);
    try {
        writeOutputAtomically(path.join(parent, "out"), { ...files, "node/k.yaml": "a: 1\n" });
    } finally {
        process.umask(old);
    }
    assert.equal(fs.statSync(path.join(parent, "out")).mode & 0o777, 0o755);
    assert.equal(fs.statSync(path.join(parent, "out", "node")).mode & 0o777, 0o755);
    assert.equal(fs.statSync(path.join(parent, "out", "manifests.yaml")).mode & 0o777, 0o644);
});

test("leftovers of a killed render are cleaned by the next one; a previous render caught mid-swap is put back first", () => {
    const parent = tmpParent();
    const out = path.join(parent, "dev");
    writeOutputAtomically(out, { ...files, "manifests.yaml": "old\n" });
    fs.mkdirSync(path.join(parent, ".dev.tmp-123-abc"));
    fs.writeFileSync(path.join(parent, ".dev.tmp-123-abc", "manifests.yaml"), "partial");
    writeOutputAtomically(out, files);
    assert.deepEqual(fs.readdirSync(parent), ["dev"]);

    // Killed between moving the old output aside and moving the new one in: the old one comes back.
    fs.renameSync(out, path.join(parent, ".dev.tmp-9-x.old"));
    fs.mkdirSync(path.join(parent, ".dev.tmp-9-x"));
    prepareOutput(out)();
    assert.equal(fs.readFileSync(path.join(out, "manifests.yaml"), "utf8"), files["manifests.yaml"]);
    assert.deepEqual(fs.readdirSync(parent), ["dev"]);
});

test("a stale lock is taken over by one render only, even when two take it over at once", () => {
    const parent = tmpParent();
    const out = path.join(parent, "dev");
    const lock = path.join(parent, ".dev.lock");
    const dead = spawnSync(process.execPath, ["-e", "0"]).pid!;
    fs.writeFileSync(lock, `${dead}\n`);
    // Render B reads the stale lock; before it acts, render A takes the lock over and holds it.
    let releaseA: (() => void) | undefined;
    const other = spawnSync(process.execPath, ["-e", "setTimeout(()=>{},1)"]); // a pid that is gone
    void other;
    assert.throws(
        () =>
            lockOutput(out, {
                staleSeen: () => {
                    if (!releaseA) {
                        // A (simulated with a live pid: this process's parent) takes the lock in between.
                        fs.rmSync(lock);
                        fs.writeFileSync(lock, `${process.ppid}\n`);
                        releaseA = () => fs.rmSync(lock, { force: true });
                    }
                },
            }),
        (err: Error) => err instanceof OutputError && new RegExp(`another render \\(pid ${process.ppid}\\)`).test(err.message),
    );
    assert.equal(fs.readFileSync(lock, "utf8"), `${process.ppid}\n`, "A's lock is still in place");
    releaseA!();
    lockOutput(out)();
    assert.deepEqual(fs.readdirSync(parent), []);
});

test("a mount point as --out fails before the render with a clear message", { skip: !fs.existsSync("/proc/self/mountinfo") && "needs /proc/self/mountinfo" }, () => {
    // checkOutTarget only reads: nothing is written near the mount point, whatever it answers.
    const mounts = fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").map((l) => l.split(" ")[4]).filter((m) => m && ["/dev/shm", "/dev/pts", "/dev"].includes(m));
    const mount = mounts.find((m) => {
        try {
            return fs.statSync(m).isDirectory() && fs.readdirSync(m).length === 0;
        } catch {
            return false;
        }
    }) ?? mounts.find((m) => fs.existsSync(m));
    assert.ok(mount, "a mount point to try");
    assert.throws(() => checkOutTarget(mount), /is a mount point: the render replaces its folder by renaming, which a mount point cannot be; give a folder inside it/);
});
