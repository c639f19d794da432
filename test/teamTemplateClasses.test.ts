/**
 * Issue 43, a test per class on the engine without opa or gator (the expected values are
 * Gatekeeper's, checked against gator v3.23.1 and opa 1.17.1 by npm run test:gatekeeper's team
 * judge and policies/gatekeeper/plan/builtins.test.ts):
 *   1. the operation model: creations, updates with oldObject, unchanged objects as the audit sees them;
 *   2. the input's numbers as Go float64s, computed integers as digits;
 *   3. a cluster-scoped custom resource in data.inventory.cluster;
 *   4. any and all on the plan path; a set's order in concat;
 *   5. a CEL variable's error in cel-go's words;
 *   6. the new built-ins; http.send refused saying why.
 */
import assert from "node:assert/strict";
import path from "node:path";
import { test } from "node:test";
import { buildConstraint, createTemplateRegistry, evaluate } from "../policies/gatekeeper/engine";
import { buildInventory } from "../policies/gatekeeper/engine/inventory";
import { defaultIsClusterScoped, withDeclaredScopes } from "../policies/gatekeeper/engine/scope";
import { PLAN_BUILTINS } from "../policies/gatekeeper/plan/builtins";
import { missingPlanBuiltins } from "../policies/gatekeeper/plan/compile";
import { OPA_BUILTINS, planRefusal } from "../policies/gatekeeper/plan/builtinStatus";
import { RegoSet } from "../policies/gatekeeper/rego/values";
import type { K8sObject, Review, TemplateRule } from "../policies/gatekeeper/types";
import { judgeCel } from "../policies/cel/judge";
import { goNumbersJSON } from "../policies/gatekeeper/wasm/host";
import { loadWasmTemplate } from "../policies/gatekeeper/wasm/rule";

const call = (name: string, ...args: unknown[]) => PLAN_BUILTINS.get(name)!(...args);
const TESTDATA = path.resolve(__dirname, "..", "policies", "gatekeeper", "wasm", "testdata");

test("issue 43.1: with the stack's earlier objects, a new object is a CREATE, a changed one an UPDATE with its oldObject, an unchanged one the audit's (operation \"\")", () => {
    const seen: Review[] = [];
    const spy: TemplateRule = { kind: "TestSpy", template: "spy", category: "general", description: "", parameterSchema: null, validate: (ctx) => (seen.push(ctx.review), []) };
    const c = buildConstraint({ kind: "TestSpy", name: "spy", match: { kinds: [{ apiGroups: [""], kinds: ["ConfigMap"] }] } }, createTemplateRegistry([spy]));
    const cm = (name: string, data: Record<string, string>): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "shop" }, data });
    const before = [cm("same", { a: "1" }), cm("changed", { a: "1" })];
    evaluate([cm("same", { a: "1" }), cm("changed", { a: "2" }), cm("new", {})], [c], undefined, { previous: before });
    assert.deepEqual(seen.map((r) => [r.object.metadata?.name, r.operation, r.oldObject?.data ?? null]), [
        ["same", "", null],
        ["changed", "UPDATE", { a: "1" }],
        ["new", "CREATE", null],
    ]);
    seen.length = 0;
    evaluate([cm("x", {})], [c]);
    assert.equal(seen[0].operation, "CREATE", "without earlier objects: a creation");
});

test("issue 43.1: a team template's input.review carries the AdmissionRequest's keys as Gatekeeper's JSON has them", () => {
    const rule = loadWasmTemplate(path.join(TESTDATA, "k8stestallowedprefixes.yaml"));
    const review: Review = { object: { apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "d" }, spec: { containers: [{ name: "c", image: "x/y" }] } }, kind: { group: "", version: "v1", kind: "Pod" }, operation: "", name: "p", namespace: "d" };
    // The rule's reviews go through the same code as validate; the violation names the container, so the template ran with this review.
    const out = rule.validate({ review, parameters: { prefixes: ["registry.example/"] }, inventory: { list: () => [] } });
    assert.equal(out.length, 1);
});

test("issue 43.2: the input's numbers print as Go prints a float64, computed integers as their digits", () => {
    assert.equal(call("sprintf", "%v %d", [1000000, 2000000]), "1e+06 %!d(float64=2e+06)");
    assert.equal(call("sprintf", "%v %d", [999999, 42]), "999999 42");
    assert.equal(call("sprintf", "%v", [1234567]), "1.234567e+06");
    assert.equal(call("sprintf", "%v %v", [call("plus", 1000000, 1), call("mul", 1000000, 3)]), "1000001 3000000");
    assert.equal(call("sprintf", "%v", [call("to_number", "9007199254740993")]), "9007199254740993", "to_number beyond 2^53 keeps its digits");
    assert.equal(call("equal", 1000000, call("to_number", "1000000")), true);
    assert.equal(goNumbersJSON(JSON.stringify({ a: 1000000, b: "1000000", c: 12.5, d: [2000000, 5] })), '{"a":1e+06,"b":"1000000","c":12.5,"d":[2e+06,5]}');
});

test("issue 43.3: a custom kind a CRD of the stack declares cluster-scoped is in data.inventory.cluster", () => {
    const crd: K8sObject = { apiVersion: "apiextensions.k8s.io/v1", kind: "CustomResourceDefinition", metadata: { name: "teamprofiles.example.com" }, spec: { group: "example.com", scope: "Cluster", names: { kind: "TeamProfile" } } };
    const profile: K8sObject = { apiVersion: "example.com/v1", kind: "TeamProfile", metadata: { name: "small" }, spec: {} };
    const objects = [crd, profile];
    const data = buildInventory(objects, withDeclaredScopes(objects, defaultIsClusterScoped), [{ group: "example.com", version: "v1", kind: "TeamProfile" }]).gatekeeperData?.() as { cluster: Record<string, Record<string, Record<string, unknown>>> };
    assert.ok(data.cluster["example.com/v1"]?.TeamProfile?.small, `in the cluster part: ${JSON.stringify(data)}`);
});

test("issue 43.4 and 43.6: any, all and the new built-ins are on the plan path; http.send is refused saying why", () => {
    assert.equal(call("any", [false, true]), true);
    assert.equal(call("all", []), true);
    assert.equal(call("concat", ",", call("union", setOf(setOf("b", "a"), setOf("c")))), "a,b,c");
    assert.equal(call("sprintf", "%v", [call("time.parse_rfc3339_ns", "2024-02-29T12:30:45.123456789+02:00")]), "1709202645123456789");
    assert.equal(call("sprintf", "%v", [call("time.parse_duration_ns", "1.5d")]), "129600000000000");
    assert.equal(call("units.parse_bytes", "2Mi"), 2097152n);
    assert.deepEqual(call("regex.find_n", "[0-9]+", "registry.example/app:1.2.3", 2), ["1", "2"]);
    const plan = { static: { builtin_funcs: [{ name: "http.send" }, { name: "time.now_ns" }, { name: "any" }] } } as never;
    assert.deepEqual(missingPlanBuiltins(plan), ["http.send", "time.now_ns"]);
    assert.match(planRefusal("http.send") ?? "", /network/);
    assert.match(planRefusal("time.now_ns") ?? "", /time of the preview/);
});

function setOf(...xs: unknown[]): RegoSet {
    const s = new RegoSet();
    for (const x of xs) s.add(x);
    return s;
}

test("issue 43.6: every built-in of OPA 1.17.1 is on the plan path or refused with a named reason", () => {
    const refused = OPA_BUILTINS.filter((n) => planRefusal(n) !== undefined);
    for (const n of refused) assert.match(planRefusal(n)!, new RegExp(`^${n.replace(/\./g, "\\.")} is (refused: .+|not provided by the plan compiler .+)$`));
    const provided = OPA_BUILTINS.filter((n) => planRefusal(n) === undefined);
    for (const n of ["any", "all", "time.parse_rfc3339_ns", "time.parse_duration_ns", "units.parse_bytes", "units.parse", "regex.find_n", "sprintf", "concat"]) assert.ok(provided.includes(n), n);
    assert.ok(provided.length >= 70, `${provided.length} provided`);
});

test("issue 43.5: a template variable's error is worded as the API server words it", () => {
    const cel = { variables: [{ name: "replicas", expression: "object.spec.replicas" }], validations: [{ expression: "variables.replicas <= 3" }] };
    const verdict = judgeCel(cel, {}, { object: { kind: "Deployment", metadata: { name: "d" }, spec: {} }, kind: { group: "apps", version: "v1", kind: "Deployment" }, namespace: "shop", name: "d" });
    assert.deepEqual(verdict.messages, [`expression 'variables.replicas <= 3' resulted in error: composited variable "replicas" fails to evaluate: no such key: replicas`]);
});
