/**
 * The three steps docs/gatekeeper.md gives a team for its own ConstraintTemplate, as written there:
 * the template file, compiled by npm run gatekeeper:wasm's compiler, then constraints of its kind.
 * (Here, not beside policies/pack/templates.ts: the compiler is a tool, and the pack imports no tool.)
 */
import assert from "node:assert/strict";
import { copyFileSync, existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createEvaluator, loadConstraintSet } from "../policies/gatekeeper/engine";
import { opaBinary } from "../policies/gatekeeper/wasm/opa";
import { modulePaths } from "../policies/gatekeeper/wasm/rule";
import { templateRegistryWith } from "../policies/pack/templates";
import { compileTemplate } from "../tools/gatekeeper/wasm";

const TESTDATA = path.resolve(__dirname, "..", "policies", "gatekeeper", "wasm", "testdata");

const opa = opaBinary();
test("the three documented steps (docs/gatekeeper.md): the template file, compiled by npm run gatekeeper:wasm's compiler, then constraints of its kind", { skip: existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)` }, () => {
    const dir = mkdtempSync(path.join(tmpdir(), "team-templates-"));
    try {
        // 1. The ConstraintTemplate file beside the constraint sets (here a temporary templates folder).
        const file = path.join(dir, "k8stestsemver.yaml");
        copyFileSync(path.join(TESTDATA, "k8stestsemver.yaml"), file);
        assert.throws(() => templateRegistryWith(dir, "templates"), /run npm run gatekeeper:wasm$/);
        // 2. Compiled (what npm run gatekeeper:wasm does for each file of policies/templates) into wasm/, to be committed.
        const manifest = compileTemplate(file, "templates/k8stestsemver.yaml", opa);
        assert.deepEqual(manifest.builtins, ["semver.is_valid", "sprintf"]);
        assert.equal(existsSync(modulePaths(file).wasm), true);
        // 3. Constraints of its kind in a constraint set.
        const text = `apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sTestSemver
metadata: {name: versions}
spec:
  match:
    kinds: [{apiGroups: [""], kinds: [Pod]}]
`;
        const set = loadConstraintSet(text, templateRegistryWith(dir, "templates"), "constraints/team.yaml");
        const pod = (version: string) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: `v-${version}`, namespace: "shop", labels: { version } }, spec: { containers: [{ name: "c", image: "x" }] } });
        const results = createEvaluator(set.constraints, set.config).evaluate([pod("1.2.3"), pod("v1.2.3"), pod("1.2")]);
        assert.deepEqual(results.map((r) => r.message), ["version label 1.2 is not a semantic version"]);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
