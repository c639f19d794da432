import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { startPack } from "./analyzerShim";

test("the analyzer shim starts the policy pack as compiled JavaScript, which answers GetAnalyzerInfo with the pack's policies", { timeout: 240_000 }, async () => {
    const cache = fs.mkdtempSync(path.join(os.tmpdir(), "ops-js-"));
    try {
        const env = { ...process.env, OPS_JS_CACHE: cache };
        const cold = await startPack(env);
        const names = await cold.policies();
        cold.stop();
        for (const p of ["gatekeeper-deny", "images-pinned-by-digest", "namespace-quota-fit", "sqlite-single-writer"]) assert.ok(names.includes(p), `${p} in ${names.join(", ")}`);
        const compiled = fs.readdirSync(cache).filter((f) => f.endsWith(".js")).length;
        assert.ok(compiled > 20, `${compiled} compiled files in the cache`);
        // A second start reads the cache: nothing is compiled again.
        const warm = await startPack(env);
        assert.deepEqual(await warm.policies(), names);
        warm.stop();
        assert.equal(fs.readdirSync(cache).filter((f) => f.endsWith(".js")).length, compiled);
    } finally {
        fs.rmSync(cache, { recursive: true, force: true });
    }
});
