import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import type { RenderResult } from "../cli/harness/render";
import { cachedRender, inputsHash } from "./renderCache";

function sandbox() {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "render-cache-"));
    fs.writeFileSync(path.join(root, "index.ts"), "export const a = 1;\n");
    fs.writeFileSync(path.join(root, "Pulumi.dev.yaml"), "config:\n  ops:x: 1\n");
    return { root, cacheDir: path.join(root, "node_modules", ".cache", "ops-render") };
}

const fake = (stack: string) => ({ stack, errors: [], objects: [{ kind: "ConfigMap", metadata: { name: "x" } }] }) as unknown as RenderResult;

test("parallel renders of one (stack, overrides) render once; the second waits for the first's file", async () => {
    const { root, cacheDir } = sandbox();
    let renders = 0;
    const render = async () => {
        renders++;
        await new Promise((r) => setTimeout(r, 200));
        return fake("dev");
    };
    const [a, b] = await Promise.all([cachedRender({ stack: "dev", overrides: {}, render, root, cacheDir }), cachedRender({ stack: "dev", overrides: {}, render, root, cacheDir })]);
    assert.equal(renders, 1);
    assert.deepEqual(a, b);
    await cachedRender({ stack: "dev", overrides: { x: 2 }, render, root, cacheDir });
    assert.equal(renders, 2, "other overrides are another render");
    const mode = fs.statSync(path.join(cacheDir, fs.readdirSync(cacheDir).find((f) => f.endsWith(".json"))!)).mode & 0o777;
    assert.equal(mode, 0o600, "cached renders are readable by the user only");
});

test("a change to any input (source or stack file) is a cache miss; a lock left by a dead process is taken over", async () => {
    const { root, cacheDir } = sandbox();
    let renders = 0;
    const render = async () => (renders++, fake("dev"));
    const before = inputsHash(root);
    await cachedRender({ stack: "dev", overrides: {}, render, root, cacheDir });
    fs.writeFileSync(path.join(root, "Pulumi.dev.yaml"), "config:\n  ops:x: 2\n");
    assert.notEqual(inputsHash(root), before);
    const file = (await cachedRender({ stack: "dev", overrides: {}, render, root, cacheDir }), fs.readdirSync(cacheDir).filter((f) => f.endsWith(".json")));
    assert.equal(renders, 2);
    assert.equal(file.length, 2);

    fs.writeFileSync(path.join(root, "index.ts"), "export const a = 2;\n");
    const key = inputsHash(root);
    assert.notEqual(key, before);
    // A lock owned by a pid that does not exist (a killed test process).
    const { execFileSync } = await import("node:child_process");
    const deadPid = Number(execFileSync(process.execPath, ["-e", "console.log(process.pid)"], { encoding: "utf8" }).trim());
    const crypto = await import("node:crypto");
    const name = `dev-${crypto.createHash("sha256").update(key).update(JSON.stringify(["dev", {}])).digest("hex").slice(0, 32)}.json.lock`;
    fs.mkdirSync(path.join(cacheDir, name));
    fs.writeFileSync(path.join(cacheDir, name, "pid"), String(deadPid));
    await cachedRender({ stack: "dev", overrides: {}, render, root, cacheDir });
    assert.equal(renders, 3);
    assert.ok(!fs.existsSync(path.join(cacheDir, name)), "the stale lock is gone");
});
