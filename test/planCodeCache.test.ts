/**
 * The code cache of compiled plans (policies/gatekeeper/plan/compile.ts): a process writes the
 * bytecode of the plans it ran when it exits, a later one takes it (and writes nothing), an entry
 * V8 refuses is compiled anew and replaced, `off` keeps none; the verdicts are the same each time.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, existsSync, lstatSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import vm from "node:vm";

const ROOT = path.resolve(__dirname, "..");
const TEMPLATE = path.join(ROOT, "policies/gatekeeper/wasm/testdata/k8stestallowedprefixes.yaml");

/** Judges two reviews with a committed test template in a new process; its verdicts (and, asked, its stderr). */
function judgeInNewProcess(cache: string | undefined, xdg?: string): string {
    return judgeWithStderr(cache, xdg).stdout;
}

function judgeWithStderr(cache: string | undefined, xdg?: string): { stdout: string; stderr: string } {
    const script = [
        `const { loadWasmTemplate } = require(${JSON.stringify(path.join(ROOT, "policies/gatekeeper/wasm/rule.ts"))});`,
        `const rule = loadWasmTemplate(${JSON.stringify(TEMPLATE)});`,
        `const review = (image) => ({ object: { kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image }] } }, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" });`,
        `const parameters = { prefixes: ["registry.example/"] };`,
        `console.log(JSON.stringify([rule.evaluateInput({ review: review("registry.example/app"), parameters }, {}), rule.evaluateInput({ review: review("other/app"), parameters }, {})]));`,
    ].join("\n");
    const env: NodeJS.ProcessEnv = { ...process.env, OPS_PLAN_CODE_CACHE: cache, XDG_CACHE_HOME: xdg };
    for (const k of ["OPS_PLAN_CODE_CACHE", "XDG_CACHE_HOME"]) if (env[k] === undefined) delete env[k];
    // tsx's CommonJS hook only (the script requires, never imports): its ESM loader thread is a third of such a child's CPU.
    const r = spawnSync(process.execPath, ["--require", "tsx/cjs", "-e", script], { encoding: "utf8", cwd: ROOT, env });
    assert.equal(r.status, 0, r.stderr);
    return { stdout: r.stdout.trim(), stderr: r.stderr };
}

const entries = (dir: string) => (existsSync(dir) ? readdirSync(dir).flatMap((v8) => readdirSync(path.join(dir, v8)).map((f) => path.join(dir, v8, f))) : []);

test("a plan's bytecode is cached by the first process, taken by the next, replaced where refused; off keeps none", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-code-cache-"));
    try {
        const cache = path.join(dir, "cache");
        const verdicts = judgeInNewProcess(cache);
        assert.match(verdicts, /registry\.example/, "the second review is refused, naming the allowed prefix");
        const [entry] = entries(cache);
        assert.ok(entry?.endsWith(".bin"), `one entry written: ${entries(cache).join(", ")}`);
        assert.equal(entries(cache).length, 1);
        assert.ok(!readdirSync(path.dirname(entry)).some((f) => f.endsWith(".tmp")), "no temporary file left");
        const written = statSync(entry).mtimeMs;

        // Taken by the next process, which writes nothing.
        assert.equal(judgeInNewProcess(cache), verdicts);
        assert.equal(statSync(entry).mtimeMs, written, "an entry V8 accepts is not written again");

        // An entry V8 refuses (not its bytecode) is compiled anew and replaced.
        writeFileSync(entry, "not bytecode");
        assert.equal(judgeInNewProcess(cache), verdicts);
        assert.notEqual(readFileSync(entry, "utf8"), "not bytecode");

        // By default under $XDG_CACHE_HOME/ops-env/plan-js; `off`: nowhere.
        const xdg = path.join(dir, "xdg");
        assert.equal(judgeInNewProcess(undefined, xdg), verdicts);
        assert.equal(entries(path.join(xdg, "ops-env", "plan-js")).length, 1);
        const xdgOff = path.join(dir, "xdg-off");
        assert.equal(judgeInNewProcess("off", xdgOff), verdicts);
        assert.ok(!existsSync(xdgOff) && !existsSync(path.join(ROOT, "off")), "off: no cache written");
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

/** The text of the compiled plan the template runs, and V8's code cache of another text of the same length (its message changed). */
function sameLengthImpostor(): { js: string; data: Buffer; digest: string } {
    const js = readFileSync(path.join(path.dirname(TEMPLATE), "wasm", "k8stestallowedprefixes.plan.js"), "utf8");
    const other = js.replace(/has an image/g, "HAS AN IMAGE");
    assert.notEqual(other, js);
    assert.equal(other.length, js.length);
    const script = new vm.Script(`(function(V,failed,conflict,merge,NONE,need,T){${other}\n})`);
    return { js, data: script.createCachedData(), digest: createHash("sha256").update(other).digest("hex") };
}

test("issue 42.1: an entry of another text (same length), with flipped bits, behind a link, or in an unsafe place is never used; a file or OFF as the setting is no error", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-code-cache-safe-"));
    try {
        const cache = path.join(dir, "cache");
        const verdicts = judgeInNewProcess(cache);
        const [entry] = entries(cache);
        const own = readFileSync(entry);
        const impostor = sameLengthImpostor();

        // V8's data of another script of the same length, as the entry (raw, and framed as another text's entry).
        writeFileSync(entry, impostor.data);
        assert.equal(judgeInNewProcess(cache), verdicts, "raw bytecode of another text is not run");
        const header = (digest: string, data: Buffer) => Buffer.concat([Buffer.from(`ops plan-js code cache 1\n${digest}\n${createHash("sha256").update(data).digest("hex")}\n`), data]);
        writeFileSync(entry, header(impostor.digest, impostor.data));
        assert.equal(judgeInNewProcess(cache), verdicts, "an entry of another text is not run");
        assert.ok(!judgeInNewProcess(cache).includes("HAS AN IMAGE"));

        // Flipped bits in the bytecode: not used (replaced), the verdicts unchanged.
        const flipped = Buffer.from(own);
        for (const at of [flipped.length - 9, flipped.length - 200, flipped.length >> 1]) flipped[at] ^= 0x5a;
        writeFileSync(entry, flipped);
        assert.equal(judgeInNewProcess(cache), verdicts);
        assert.notDeepEqual(readFileSync(entry), flipped, "the damaged entry is replaced");

        // The entry a symbolic link to another file: not followed, neither read nor written through.
        const victim = path.join(dir, "victim.txt");
        writeFileSync(victim, "keep me");
        rmSync(entry);
        symlinkSync(victim, entry);
        assert.equal(judgeInNewProcess(cache), verdicts);
        assert.equal(readFileSync(victim, "utf8"), "keep me", "the link's target is untouched");
        assert.ok(!lstatSync(entry).isSymbolicLink(), "the link is replaced by an entry");

        // A cache directory others may write to is not used, and a line says so.
        chmodSync(path.dirname(entry), 0o777);
        const open = judgeWithStderr(cache);
        assert.equal(open.stdout, verdicts);
        assert.match(open.stderr, /plan code cache not used: .* is writable by other users/);
        chmodSync(path.dirname(entry), 0o700);

        // OPS_PLAN_CODE_CACHE naming a file: a line, no error, the file untouched.
        const file = path.join(dir, "a-file");
        writeFileSync(file, "data");
        const onFile = judgeWithStderr(file);
        assert.equal(onFile.stdout, verdicts);
        assert.match(onFile.stderr, /plan code cache not used: .*a-file.* is not a directory|plan code cache not used: .*a-file.*ENOTDIR|EEXIST/);
        assert.equal(readFileSync(file, "utf8"), "data");

        // OFF, Off, off: no cache, no folder of that name anywhere.
        for (const off of ["OFF", "Off", "off"]) {
            assert.equal(judgeInNewProcess(off, path.join(dir, "xdg-off")), verdicts);
            assert.ok(!existsSync(path.join(ROOT, off)), `no folder named ${off} in the working directory`);
        }
        assert.ok(!existsSync(path.join(dir, "xdg-off")));
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
