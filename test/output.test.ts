/**
 * The render folder is written atomically: all files or the previous output untouched, one
 * writer at a time, and a clear message for every way it can fail.
 */
import assert from "node:assert/strict";
import { spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { OutputError, prepareOutput, publishRender, RENDER_MARKER, writeOutputAtomically } from "../cli/harness/output";

const ROOT = path.resolve(__dirname, "..");
const TSX = path.join(ROOT, "node_modules", ".bin", "tsx");

/** A folder holding a previous good render, and a snapshot of its files to compare against. */
function previousRender() {
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), "render-out-"));
    const out = path.join(parent, "dev");
    fs.mkdirSync(path.join(out, "node"), { recursive: true });
    fs.writeFileSync(path.join(out, "manifests.yaml"), "kind: ConfigMap\n# the last good render\n");
    fs.writeFileSync(path.join(out, "resources.json"), "[]\n");
    fs.writeFileSync(path.join(out, "node", "kubelet-config.yaml"), "old: true\n");
    fs.writeFileSync(path.join(out, RENDER_MARKER), "a previous render\n");
    return { parent, out, snapshot: () => listing(out) };
}

function listing(dir: string): Record<string, string> {
    const out: Record<string, string> = {};
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            const full = path.join(d, e.name);
            if (e.isDirectory()) walk(full);
            else out[path.relative(dir, full)] = fs.readFileSync(full, "utf8");
        }
    };
    walk(dir);
    return out;
}

const good = { manifests: "kind: Namespace\n", resourcesJson: "[1]\n", files: { "node/new.yaml": "new: true\n" }, errors: [] as string[] };

test("a successful write replaces the whole folder and leaves no temporary folder or lock beside it", () => {
    const { parent, out } = previousRender();
    const r = publishRender(good, out);
    assert.equal(r.written, true, r.message);
    const { [RENDER_MARKER]: marker, ...written } = listing(out);
    assert.deepEqual(written, { "manifests.yaml": "kind: Namespace\n", "resources.json": "[1]\n", "node/new.yaml": "new: true\n" });
    assert.match(marker, /npm run render/);
    assert.deepEqual(fs.readdirSync(parent), ["dev"]);
});

test("a failed render writes nothing and says the previous output is untouched", () => {
    const { out, snapshot } = previousRender();
    const before = snapshot();
    const r = publishRender({ ...good, manifests: "", errors: ["Invalid stack configuration"] }, out);
    assert.equal(r.written, false);
    assert.match(r.message, /render failed: 1 problem\(s\).*nothing written, the previous output in .*dev is untouched/);
    assert.deepEqual(snapshot(), before);
});

test("a full disk in the middle of a file: a clear error, the old output intact, no partial folder left", () => {
    const { parent, out, snapshot } = previousRender();
    const before = snapshot();
    let written = 0;
    const fullDisk = {
        writeFile(file: string, text: string) {
            if (written++ === 1) {
                fs.writeFileSync(file, text.slice(0, 1)); // a truncated file, as a full disk leaves it
                throw Object.assign(new Error("ENOSPC: no space left on device, write"), { code: "ENOSPC" });
            }
            fs.writeFileSync(file, text);
        },
    };
    assert.throws(() => writeOutputAtomically(out, { "manifests.yaml": "a", "resources.json": "bb", "x.yaml": "c" }, fullDisk), (err: Error) => {
        assert.ok(err instanceof OutputError);
        assert.match(err.message, /writing resources\.json failed: no space left on device \(ENOSPC\); the previous output in .*dev is untouched/);
        return true;
    });
    assert.deepEqual(snapshot(), before);
    assert.deepEqual(fs.readdirSync(parent), ["dev"], "no temporary folder and no lock left");
    written = 0;
    const r = publishRender(good, out, fullDisk);
    assert.equal(r.written, false);
    assert.match(r.message, /^render not written: .*ENOSPC/);
});

test("a second writer fails clearly while the first holds the lock; a lock whose process is gone is taken over", async () => {
    const { parent, out, snapshot } = previousRender();
    const holder = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60000)"]);
    try {
        fs.writeFileSync(path.join(parent, ".dev.lock"), `${holder.pid}\n`);
        const before = snapshot();
        assert.throws(() => writeOutputAtomically(out, { "manifests.yaml": "x" }), new RegExp(`another render \\(pid ${holder.pid}\\) is writing .*dev; nothing was written`));
        assert.deepEqual(snapshot(), before);

        // The command line takes the lock before rendering: it fails at once, naming the other render.
        const cli = spawnSync(TSX, ["cli/render.ts", "--stack", "dev", "--out", out], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
        assert.equal(cli.status, 2, cli.stdout + cli.stderr);
        assert.match(cli.stderr, new RegExp(`another render \\(pid ${holder.pid}\\) is writing`));
        assert.deepEqual(snapshot(), before);
    } finally {
        holder.kill();
    }
    await new Promise((r) => holder.once("exit", r));
    const r = publishRender(good, out);
    assert.equal(r.written, true, r.message);
    assert.ok(!fs.existsSync(path.join(parent, ".dev.lock")));
});

test("--out under /proc fails at once with a message (it used to spin at 100% CPU)", { skip: process.platform !== "linux" && "needs /proc" }, () => {
    assert.throws(() => prepareOutput("/proc/x"), /cannot write the render to \/proc\/x: .*nothing was rendered or written/);
    const started = Date.now();
    const cli = spawnSync(TSX, ["cli/render.ts", "--stack", "dev", "--out", "/proc/x"], { cwd: ROOT, encoding: "utf8", timeout: 60_000 });
    assert.equal(cli.status, 2, cli.stdout + cli.stderr);
    assert.match(cli.stderr, /render failed: cannot write the render to \/proc\/x/);
    assert.ok(Date.now() - started < 60_000);
});

test("an --out that is a file, not a folder, is refused and the file kept", () => {
    const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "render-file-")), "out");
    fs.writeFileSync(file, "keep me");
    assert.throws(() => writeOutputAtomically(file, { "manifests.yaml": "x" }), /exists and is not a folder; nothing was written/);
    assert.equal(fs.readFileSync(file, "utf8"), "keep me");
});
