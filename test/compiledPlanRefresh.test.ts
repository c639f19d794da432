/**
 * npm run gatekeeper:wasm's statuses for the files it derives without opa (tools/gatekeeper/wasm.ts):
 * a template file changed where its Rego does not see (a comment), or a plan's JavaScript changed,
 * is "plan.js or manifest stale", and is made again from the committed plan, without opa.
 * (Here, not beside policies/gatekeeper/wasm: the generator is a tool, and the pack imports no tool.)
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { loadWasmTemplate, modulePaths } from "../policies/gatekeeper/wasm/rule";
import { refreshCompiledPlan, statusOf } from "../tools/gatekeeper/wasm";

const TESTDATA = path.resolve(__dirname, "..", "policies", "gatekeeper", "wasm", "testdata");

test("a comment in a template, or a plan's JavaScript changed by hand: made again from the committed plan without opa", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-refresh-"));
    try {
        const from = path.join(TESTDATA, "k8stestreplicarange.yaml");
        const file = path.join(dir, "k8stestreplicarange.yaml");
        copyFileSync(from, file);
        mkdirSync(path.join(dir, "wasm"));
        for (const which of ["wasm", "manifest", "plan", "js"] as const) copyFileSync(modulePaths(from)[which], modulePaths(file)[which]);
        assert.equal(statusOf(file, "templates/k8stestreplicarange.yaml"), "up to date");
        const js = readFileSync(modulePaths(file).js, "utf8");

        writeFileSync(file, `# reviewed by the platform team\n${readFileSync(from, "utf8")}`);
        assert.equal(statusOf(file, "templates/k8stestreplicarange.yaml"), "plan.js or manifest stale");
        assert.equal(loadWasmTemplate(file).kind, "K8sTestReplicaRange", "loads meanwhile, from the YAML");
        const manifest = refreshCompiledPlan(file, "templates/k8stestreplicarange.yaml");
        assert.equal(statusOf(file, "templates/k8stestreplicarange.yaml"), "up to date");
        assert.equal(readFileSync(modulePaths(file).js, "utf8"), js, "the same JavaScript");
        assert.match(JSON.stringify(manifest.templateFile?.document), /K8sTestReplicaRange/);

        writeFileSync(modulePaths(file).js, js.replace("fewer than", "less than"));
        assert.equal(statusOf(file, "templates/k8stestreplicarange.yaml"), "plan.js or manifest stale");
        refreshCompiledPlan(file, "templates/k8stestreplicarange.yaml");
        assert.equal(readFileSync(modulePaths(file).js, "utf8"), js);
        assert.equal(loadWasmTemplate(file).engine, "plan");
        assert.equal(existsSync(`${modulePaths(file).js}.tmp`), false, "no temporary file left");
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
