/**
 * The code cache of compiled plans (policies/gatekeeper/plan/compile.ts): a process writes the
 * bytecode of the plans it ran when it exits, a later one takes it (and writes nothing), an entry
 * V8 refuses is compiled anew and replaced, `off` keeps none; the verdicts are the same each time.
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(__dirname, "..");
const TEMPLATE = path.join(ROOT, "policies/gatekeeper/wasm/testdata/k8stestallowedprefixes.yaml");

/** Judges two reviews with a committed test template in a new process; its verdicts. */
function judgeInNewProcess(cache: string | undefined, xdg?: string): string {
    const script = [
        `const { loadWasmTemplate } = require(${JSON.stringify(path.join(ROOT, "policies/gatekeeper/wasm/rule.ts"))});`,
        `const rule = loadWasmTemplate(${JSON.stringify(TEMPLATE)});`,
        `const review = (image) => ({ object: { kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image }] } }, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" });`,
        `const parameters = { prefixes: ["registry.example/"] };`,
        `console.log(JSON.stringify([rule.evaluateInput({ review: review("registry.example/app"), parameters }, {}), rule.evaluateInput({ review: review("other/app"), parameters }, {})]));`,
    ].join("\n");
    const env: NodeJS.ProcessEnv = { ...process.env, OPS_PLAN_CODE_CACHE: cache, XDG_CACHE_HOME: xdg };
    for (const k of ["OPS_PLAN_CODE_CACHE", "XDG_CACHE_HOME"]) if (env[k] === undefined) delete env[k];
    const r = spawnSync(process.execPath, ["--import", "tsx", "-e", script], { encoding: "utf8", cwd: ROOT, env });
    assert.equal(r.status, 0, r.stderr);
    return r.stdout.trim();
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
