/**
 * Issue 42, class 3 (a team template can hang or be swapped) and issue 43, classes 7-9 (CEL-only
 * templates, a team template of a library kind, several bad templates), on copies of the committed
 * test templates in temporary folders:
 *   - a time budget per evaluation, naming the template, on the compiled and the Wasm path;
 *   - a plan swapped for another policy's (its digest edited in the manifest) is refused by the
 *     pack and not compiled again by npm run gatekeeper:wasm;
 *   - one broken template does not stop gatekeeper:wasm from handling the others;
 *   - a cut-off manifest is blamed on the manifest, never on the pack config;
 *   - a parameter schema the API server would refuse (type: bogus) is refused;
 *   - a CEL-only template loads (nothing compiled) and is judged by its CEL;
 *   - a team template of a library kind replaces the library's, and the pack says so;
 *   - every bad template is named at once.
 */
import assert from "node:assert/strict";
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { createEvaluator, loadConstraintSet } from "../policies/gatekeeper/engine";
import { loadWasmTemplate, loadWasmTemplates, modulePaths, type CompiledTemplateRule } from "../policies/gatekeeper/wasm/rule";
import type { RuleContext } from "../policies/gatekeeper/types";
import { teamFolder as teamFolderOf, TESTDATA } from "../policies/pack/teamFolder";
import { packTemplatesWith } from "../policies/pack/templates";
import { main as gatekeeperWasm, refreshCompiledPlan } from "../tools/gatekeeper/wasm";


const teamFolder = (names: string[]) => teamFolderOf(names, "team-safety-");

/** An inventory of many Deployments of one namespace, in Gatekeeper's layout. */
function bigInventory(n: number): RuleContext["inventory"] {
    const deployments: Record<string, unknown> = {};
    for (let i = 0; i < n; i++) deployments[`d${i}`] = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: `d${i}`, namespace: "shop", labels: { app: `a${i % 1000}` } } };
    const data = { cluster: {}, namespace: { shop: { "apps/v1": { Deployment: deployments } } } };
    return { list: () => [], gatekeeperData: () => data };
}

const review = (name: string): RuleContext["review"] => ({
    object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "shop", labels: { app: "a1" } } },
    kind: { group: "apps", version: "v1", kind: "Deployment" },
    operation: "CREATE",
    name,
    namespace: "shop",
});

function withBudget<T>(ms: string, run: () => T): T {
    const before = process.env.OPS_TEMPLATE_TIME_BUDGET_MS;
    process.env.OPS_TEMPLATE_TIME_BUDGET_MS = ms;
    try {
        return run();
    } finally {
        if (before === undefined) delete process.env.OPS_TEMPLATE_TIME_BUDGET_MS;
        else process.env.OPS_TEMPLATE_TIME_BUDGET_MS = before;
    }
}

for (const [engine, size] of [["plan", 150_000], ["wasm", 60_000]] as const) {
    test(`issue 42.3: an evaluation past its time budget is stopped on the ${engine} path, naming the template and the object; later ones are refused at once`, () => {
        const rule: CompiledTemplateRule = loadWasmTemplate(path.join(TESTDATA, "k8stestuniqueapplabel.yaml"), "templates/k8stestuniqueapplabel.yaml", { engine });
        assert.equal(rule.engine, engine);
        const inventory = bigInventory(size);
        // Within a budget it fits, the same evaluation is judged.
        withBudget("600000", () => assert.equal(rule.validate({ review: review("x"), parameters: {}, inventory }).length, 1));
        withBudget("1", () => {
            assert.throws(() => rule.validate({ review: review("y"), parameters: {}, inventory }), /ConstraintTemplate k8stestuniqueapplabel \(K8sTestUniqueAppLabel\) ran longer than its time budget of 1 ms \(OPS_TEMPLATE_TIME_BUDGET_MS\) on Deployment\/shop\/y and was stopped/);
            // Not evaluated again: the refusal still names the object that ran out of time.
            assert.throws(() => rule.validate({ review: review("z"), parameters: {}, inventory }), /ran longer than its time budget of 1 ms \(OPS_TEMPLATE_TIME_BUDGET_MS\) on Deployment\/shop\/y /);
        });
    });
}

test("issue 42.3: a plan swapped for another policy's, its digest edited in the manifest, is refused by the pack and not compiled again without opa", () => {
    const dir = teamFolder(["k8stestreplicarange", "k8stestallowedprefixes"]);
    try {
        const target = path.join(dir, "k8stestreplicarange.yaml");
        const mine = modulePaths(target);
        const theirs = modulePaths(path.join(dir, "k8stestallowedprefixes.yaml"));
        copyFileSync(theirs.plan, mine.plan);
        copyFileSync(theirs.js, mine.js);
        const manifest = JSON.parse(readFileSync(mine.manifest, "utf8"));
        const other = JSON.parse(readFileSync(theirs.manifest, "utf8"));
        writeFileSync(mine.manifest, JSON.stringify({ ...manifest, plan: other.plan, planJs: other.planJs }, null, 2));
        assert.throws(() => loadWasmTemplate(target, "templates/k8stestreplicarange.yaml"), /K8sTestReplicaRange .* is stale/);
        assert.throws(() => refreshCompiledPlan(target, "templates/k8stestreplicarange.yaml"), /the plan is not the one its manifest binds to the template; compile it with opa/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("issue 42.3 and 43.7/43.9: gatekeeper:wasm handles every template, naming each broken one; a CEL-only template needs nothing compiled", () => {
    const dir = teamFolder(["k8stestreplicarange", "k8stestsemver"]);
    const logs: string[] = [];
    const { log, error } = console;
    try {
        writeFileSync(path.join(dir, "a-broken.yaml"), "apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: x\n");
        writeFileSync(path.join(dir, "b-bogus.yaml"), readFileSync(path.join(dir, "k8stestreplicarange.yaml"), "utf8").replace(/type: integer/, "type: bogus").replace(/k8stestreplicarange/g, "k8stestbogus").replace(/K8sTestReplicaRange/g, "K8sTestBogus"));
        writeFileSync(path.join(dir, "c-celonly.yaml"), CEL_ONLY);
        console.log = (...a: unknown[]) => void logs.push(a.join(" "));
        console.error = (...a: unknown[]) => void logs.push(a.join(" "));
        const code = gatekeeperWasm(["--check", "--opa", path.join(dir, "no-opa")], [dir]);
        console.log = log;
        console.error = error;
        const out = logs.join("\n");
        assert.equal(code, 1, out);
        assert.match(out, new RegExp(`${dir}/a-broken.yaml: .*`));
        assert.match(out, /b-bogus\.yaml: spec\.crd\.spec\.validation\.openAPIV3Schema\.properties\[min\]\.type: Unsupported value: "bogus"/);
        assert.match(out, /c-celonly\.yaml: CEL only: nothing to compile/);
        assert.match(out, /k8stestreplicarange\.yaml: up to date/);
        assert.match(out, /k8stestsemver\.yaml: up to date/);
        assert.match(out, /2 template\(s\) failed/);
    } finally {
        console.log = log;
        console.error = error;
        rmSync(dir, { recursive: true, force: true });
    }
});

const CEL_ONLY = `apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8stestcelonly
spec:
  crd:
    spec:
      names:
        kind: K8sTestCelOnly
      validation:
        openAPIV3Schema:
          type: object
          properties:
            max: {type: integer}
  targets:
    - target: admission.k8s.gatekeeper.sh
      code:
        - engine: K8sNativeValidation
          source:
            validations:
              - expression: "object.spec.replicas <= variables.params.max"
                messageExpression: "'replicas ' + string(object.spec.replicas) + ' above ' + string(variables.params.max)"
`;

test("issue 43.7: a CEL-only template loads without compiled files and is judged by its CEL", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "team-cel-"));
    try {
        writeFileSync(path.join(dir, "celonly.yaml"), CEL_ONLY);
        const [rule] = loadWasmTemplates(dir, "templates");
        assert.equal(rule.engine, "cel");
        const d = (replicas: number) => ({ object: { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "shop" }, spec: { replicas } }, kind: { group: "apps", version: "v1", kind: "Deployment" }, operation: "CREATE" as const, name: "d", namespace: "shop" });
        const inventory = { list: () => [] };
        assert.deepEqual(rule.validate({ review: d(5), parameters: { max: 3 }, inventory }), [{ msg: "replicas 5 above 3" }]);
        assert.deepEqual(rule.validate({ review: d(2), parameters: { max: 3 }, inventory }), []);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("issue 42.3 and 43.9: every bad template is named at once; a cut-off manifest is blamed on the manifest", () => {
    const dir = teamFolder(["k8stestreplicarange", "k8stestsemver"]);
    try {
        const semver = modulePaths(path.join(dir, "k8stestsemver.yaml")).manifest;
        writeFileSync(semver, readFileSync(semver, "utf8").slice(0, 200));
        writeFileSync(path.join(dir, "z-bogus.yaml"), readFileSync(path.join(dir, "k8stestreplicarange.yaml"), "utf8").replace(/type: integer/, "type: bogus").replace(/k8stestreplicarange/g, "k8stestbogus").replace(/K8sTestReplicaRange/g, "K8sTestBogus"));
        let message = "";
        try {
            loadWasmTemplates(dir, "templates");
        } catch (err) {
            message = (err as Error).message;
            assert.equal((err as Error).name, "TeamTemplateError");
        }
        assert.match(message, /^2 team templates cannot be loaded:\n/);
        assert.match(message, /- templates\/wasm\/k8stestsemver\.wasm\.json: the generated manifest is not valid JSON \(.*cut off or edited\?\); run npm run gatekeeper:wasm/);
        assert.match(message, /- templates\/z-bogus\.yaml: .*type: Unsupported value: "bogus"/);
        assert.doesNotMatch(message, /pack config|config\//);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("issue 43.8: a team template of a library kind replaces the library's template, and the pack says so", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "team-vendored-"));
    try {
        // A team's edited copy of the library's K8sRequiredLabels, as CEL (nothing to compile).
        writeFileSync(
            path.join(dir, "requiredlabels.yaml"),
            CEL_ONLY.replace(/k8stestcelonly/g, "k8srequiredlabels").replace(/K8sTestCelOnly/g, "K8sRequiredLabels").replace("max: {type: integer}", "labels: {type: array, items: {type: object, properties: {key: {type: string}}}}")
                .replace(/- expression: .*\n.*\n/, `- expression: "variables.params.labels.all(l, has(object.metadata.labels) && l.key in object.metadata.labels)"\n                message: "the team's own label rule"\n`),
        );
        const { registry, notes } = packTemplatesWith(dir, "templates");
        assert.deepEqual(notes, ["policy pack: the team's ConstraintTemplate k8srequiredlabels (templates/) replaces the library's template of kind K8sRequiredLabels"]);
        const set = loadConstraintSet(
            "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRequiredLabels\nmetadata: {name: owner}\nspec:\n  match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}\n  parameters: {labels: [{key: owner}]}\n",
            registry,
            "constraints/team.yaml",
        );
        const results = createEvaluator(set.constraints).evaluate([{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "shop" }, spec: { replicas: 1 } }]);
        assert.deepEqual(results.map((r) => r.message), ["the team's own label rule"]);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
