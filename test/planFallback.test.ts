/**
 * A team template whose plan the plan compiler refuses (a `with` statement) is compiled as a team
 * compiles it (npm run gatekeeper:wasm's compiler) and runs on its Wasm module, judging as
 * `opa eval` does.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { opaBinary } from "../policies/gatekeeper/wasm/opa";
import { opaVerdicts, wasmVerdict } from "../policies/gatekeeper/wasm/oracle";
import { loadWasmTemplate } from "../policies/gatekeeper/wasm/rule";
import { compileTemplate } from "../tools/gatekeeper/wasm";

const opa = opaBinary();
const skip = existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)`;

test("a team template whose plan the compiler refuses runs on its Wasm module, judging as opa eval", { skip }, () => {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-fallback-"));
    try {
        mkdirSync(path.join(dir, "wasm"));
        const file = path.join(dir, "k8stestwith.yaml");
        writeFileSync(
            file,
            [
                "apiVersion: templates.gatekeeper.sh/v1",
                "kind: ConstraintTemplate",
                "metadata:",
                "  name: k8stestwith",
                "spec:",
                "  crd:",
                "    spec:",
                "      names:",
                "        kind: K8sTestWith",
                "  targets:",
                "    - target: admission.k8s.gatekeeper.sh",
                "      rego: |",
                "        package k8stestwith",
                "        name := input.review.object.metadata.name",
                '        violation[{"msg": msg}] {',
                '          n := name with input.review.object.metadata.name as "renamed"',
                '          msg := sprintf("seen as %v, named %v", [n, name])',
                "        }",
                "",
            ].join("\n"),
        );
        compileTemplate(file, "k8stestwith.yaml", opa);
        const rule = loadWasmTemplate(file);
        assert.equal(rule.engine, "wasm");
        assert.match(rule.description, /its plan uses the statement WithStmt/);
        const input = { review: { object: { metadata: { name: "web" } } }, parameters: {} };
        const [expected] = opaVerdicts(opa, rule, [input], { inventory: {} });
        assert.deepEqual(wasmVerdict(rule, input, { inventory: {} }), expected);
        assert.deepEqual(expected, { violations: [JSON.stringify({ details: {}, msg: "seen as renamed, named web" })] });
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
