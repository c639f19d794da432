import assert from "node:assert/strict";
import { rmSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { generateAdmissionPolicies } from "../admission/generate";
import { admit } from "../admission/simulate";
import { createEvaluator, loadConstraintSet } from "../gatekeeper/engine";
import { teamFolder as teamFolderOf } from "./teamFolder";
import { templateRegistryWith } from "./templates";


const teamFolder = (names: string[]) => teamFolderOf(names, "team-templates-");

const CONSTRAINTS = `apiVersion: config.gatekeeper.sh/v1alpha1
kind: Config
metadata: {name: config, namespace: gatekeeper-system}
spec:
  match:
  - excludedNamespaces: [kube-system]
    processes: ["*"]
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sTestReplicaRange
metadata: {name: two-or-three}
spec:
  enforcementAction: warn
  match:
    kinds: [{apiGroups: [apps], kinds: [Deployment]}]
  parameters: {min: 2, max: 3}
---
apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRequiredLabels
metadata: {name: owner}
spec:
  match:
    kinds: [{apiGroups: [apps], kinds: [Deployment]}]
  parameters:
    labels: [{key: owner}]
`;

const deployment = (name: string, namespace: string, replicas: number) => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: { replicas, template: { spec: { containers: [{ name: "c", image: "x" }] } } },
});

test("a constraint set mixes the library's templates and a team's own; match, actions and the Config's exclusions are the engine's", () => {
    const dir = teamFolder(["k8stestreplicarange"]);
    try {
        const registry = templateRegistryWith(dir, "templates");
        const set = loadConstraintSet(CONSTRAINTS, registry, "constraints/team.yaml");
        const results = createEvaluator(set.constraints, set.config).evaluate([deployment("one", "shop", 1), deployment("sys", "kube-system", 1)]);
        assert.deepEqual(
            results.map((r) => [r.constraintKind, r.enforcementAction, r.object.name, r.message]),
            [
                ["K8sTestReplicaRange", "warn", "one", 'one has 1 replicas, fewer than 2 ({"max": 3, "min": 2})'],
                ["K8sRequiredLabels", "deny", "one", 'you must provide labels: {"owner"}'],
            ],
        );
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("a constraint of a Rego-only team template gets no admission policy, and the render says why", () => {
    const dir = teamFolder(["k8stestreplicarange"]);
    try {
        const set = loadConstraintSet(CONSTRAINTS, templateRegistryWith(dir, "templates"), "constraints/team.yaml");
        const out = generateAdmissionPolicies(set.constraints);
        assert.deepEqual(out.skipped.find((s) => s.constraint === "K8sTestReplicaRange/two-or-three"), {
            constraint: "K8sTestReplicaRange/two-or-three",
            reason: "ConstraintTemplate k8stestreplicarange (policies/templates) has Rego only, and a ValidatingAdmissionPolicy needs CEL; at admission only Gatekeeper itself judges it",
        });
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("a team template whose module is missing stops the load, naming the file and the command", () => {
    const dir = teamFolder(["k8stestreplicarange"]);
    try {
        rmSync(path.join(dir, "wasm"), { recursive: true });
        assert.throws(() => templateRegistryWith(dir, "templates"), /^TeamTemplateError: templates\/k8stestreplicarange\.yaml: template K8sTestReplicaRange has no compiled module \(templates\/wasm\/k8stestreplicarange\.wasm\); run npm run gatekeeper:wasm$/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("a team template with CEL code becomes the constraint's ValidatingAdmissionPolicy (anyObject, params, its variables, messageExpression)", () => {
    const dir = teamFolder(["k8stestrequiredowner"]);
    try {
        const text = `apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sTestRequiredOwner
metadata: {name: owner}
spec:
  enforcementAction: warn
  match:
    kinds: [{apiGroups: [""], kinds: [Pod]}]
  parameters: {key: team}
`;
        const set = loadConstraintSet(text, templateRegistryWith(dir, "templates"), "constraints/team.yaml");
        const out = generateAdmissionPolicies(set.constraints);
        assert.deepEqual(out.skipped, []);
        const [policy] = out.policies;
        const [binding] = out.bindings;
        assert.deepEqual(binding.spec.validationActions, ["Warn"]);
        assert.deepEqual(
            policy.spec.variables.slice(-3),
            [
                { name: "anyObject", expression: "variables.subject" },
                { name: "params", expression: '{"key": "team"}' },
                { name: "labels", expression: "has(variables.anyObject.metadata.labels) ? variables.anyObject.metadata.labels : {}" },
            ],
        );
        const pod = (labels?: Record<string, string>) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "shop", ...(labels ? { labels } : {}) }, spec: { containers: [{ name: "c", image: "x" }] } });
        assert.deepEqual(admit(policy, binding, pod()).failed, ["[owner] p must have the label team"]);
        assert.deepEqual(admit(policy, binding, pod({ team: "a" })).failed, []);
        // The workload's pod template is judged as the Pod it describes, as at preview.
        const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" }, spec: { template: { metadata: { labels: {} }, spec: { containers: [{ name: "c", image: "x" }] } } } };
        assert.equal(admit(policy, binding, deployment).failed.length, 1);
        // Without parameters Gatekeeper binds params to null (and `null.key` is an evaluation error).
        const bare = loadConstraintSet(text.replace("  parameters: {key: team}\n", ""), templateRegistryWith(dir, "templates"), "constraints/team.yaml");
        assert.deepEqual(generateAdmissionPolicies(bare.constraints).policies[0].spec.variables.find((v: { name: string }) => v.name === "params"), { name: "params", expression: "null" });
        // At preview the pack judges the same constraint by the template's Rego.
        const results = createEvaluator(set.constraints, set.config).evaluate([pod(), pod({ team: "a" })]);
        assert.deepEqual(results.map((r) => r.message), ["p must have the label team"]);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
