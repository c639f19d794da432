import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { buildConstraint, type ConstraintInput } from "../gatekeeper/engine";
import { templateRegistry } from "../gatekeeper/templates";
import type { K8sObject } from "../gatekeeper/types";
import { stackAdmissionPolicies } from "./catalogue";
import { generateAdmissionPolicies, VALIDATION_ACTIONS } from "./generate";
import { admissionRules, notAtAdmission } from "./rules";
import { specNotAtAdmission } from "./spec";
import { admit } from "./simulate";
import { celCheckError } from "../cel/environment";

const privileged = (input: Partial<ConstraintInput> = {}) =>
    buildConstraint({ kind: "K8sPSPPrivilegedContainer", name: "no-privileged", match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] }, ...input }, templateRegistry);

const podSpec = (privileged: boolean) => ({ containers: [{ name: "app", image: "nginx:1", securityContext: { privileged } }] });
const pod = (priv: boolean, labels: Record<string, string> = {}, namespace = "apps"): K8sObject =>
    ({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace, labels }, spec: podSpec(priv) });
const cronJob = (priv: boolean, labels: Record<string, string> = {}): K8sObject => ({
    apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "c", namespace: "apps" },
    spec: { schedule: "* * * * *", jobTemplate: { spec: { template: { metadata: { labels }, spec: podSpec(priv) } } } },
});
const deployment = (priv: boolean, labels: Record<string, string> = {}): K8sObject => ({
    apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "apps", labels: { other: "x" } },
    spec: { selector: { matchLabels: labels }, template: { metadata: { labels }, spec: podSpec(priv) } },
});

function judge(c: ReturnType<typeof privileged>, obj: K8sObject, excludedNamespaces: string[] = []) {
    const g = generateAdmissionPolicies([c], { excludedNamespaces });
    return admit(g.policies[0], g.bindings[0], obj);
}

test("enforcement actions map to validationActions: deny → Deny, warn → Warn, dryrun → Audit", () => {
    assert.deepEqual(VALIDATION_ACTIONS, { deny: "Deny", warn: "Warn", dryrun: "Audit" });
    for (const [action, expected] of [["deny", "Deny"], ["warn", "Warn"], ["dryrun", "Audit"]]) {
        const g = generateAdmissionPolicies([privileged({ enforcementAction: action })]);
        assert.deepEqual(g.bindings[0].spec.validationActions, [expected]);
        assert.equal(g.bindings[0].spec.policyName, g.policies[0].metadata.name);
    }
});

test("a Pod constraint also judges the pod templates of workloads, CronJob's one level deeper", () => {
    const c = privileged();
    const rules = generateAdmissionPolicies([c]).policies[0].spec.matchConstraints.resourceRules;
    assert.deepEqual(rules.map((r: any) => `${r.apiGroups}:${r.resources}`), [":pods", "apps:deployments,statefulsets,daemonsets,replicasets", "batch:jobs,cronjobs", ":replicationcontrollers"]);
    assert.deepEqual(judge(c, pod(true)).failed.length, 1);
    assert.deepEqual(judge(c, pod(false)).failed, []);
    assert.equal(judge(c, cronJob(true)).failed.length, 1);
    assert.deepEqual(judge(c, cronJob(false)).failed, []);
    assert.equal(judge(c, deployment(true)).failed.length, 1);
});

test("a constraint that does not match Pod judges no pod template", () => {
    const c = privileged({ match: { kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] } });
    const policy = generateAdmissionPolicies([c]).policies[0];
    assert.deepEqual(policy.spec.matchConstraints.resourceRules.map((r: any) => r.resources), [["deployments"]]);
    assert.equal(judge(c, pod(true)).matched, false);
    // The template reads spec.containers, which a Deployment does not have: nothing to refuse, as in the pack.
    assert.deepEqual(judge(c, deployment(true)).failed, []);
});

test("labelSelector: the pod template's labels for workloads (a matchCondition), the object's labels otherwise (objectSelector)", () => {
    const selector = { matchExpressions: [{ key: "tier", operator: "NotIn" as const, values: ["batch"] }] };
    const c = privileged({ match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }], labelSelector: selector } });
    assert.equal(judge(c, deployment(true, { tier: "batch" })).matched, false);
    assert.equal(judge(c, deployment(true, { tier: "web" })).failed.length, 1);
    assert.equal(judge(c, pod(true, { tier: "batch" })).matched, false);
    const svc = buildConstraint({ kind: "K8sBlockLoadBalancer", name: "lb", match: { kinds: [{ apiGroups: [""], kinds: ["Service"] }], labelSelector: selector } }, templateRegistry);
    assert.deepEqual(generateAdmissionPolicies([svc]).policies[0].spec.matchConstraints.objectSelector, selector);
});

test("namespaces, excludedNamespaces and the Config's exclusions select by kubernetes.io/metadata.name; globs become matchConditions", () => {
    const c = privileged({ match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }], namespaces: ["apps", "web"], excludedNamespaces: ["kube-*", "web"] } });
    const policy = generateAdmissionPolicies([c], { excludedNamespaces: ["argocd"] }).policies[0];
    assert.deepEqual(policy.spec.matchConstraints.namespaceSelector, {
        matchExpressions: [
            { key: "kubernetes.io/metadata.name", operator: "In", values: ["apps", "web"] },
            { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["web", "argocd"] },
        ],
    });
    assert.deepEqual(policy.spec.matchConditions.map((m: any) => m.name), ["excluded-namespaces"]);
    assert.equal(judge(c, pod(true, {}, "apps"), ["argocd"]).failed.length, 1);
    assert.equal(judge(c, pod(true, {}, "web"), ["argocd"]).matched, false);
    assert.equal(judge(c, pod(true, {}, "other"), ["argocd"]).matched, false);
    const globbed = privileged({ match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }], excludedNamespaces: ["kube-*"] } });
    assert.equal(judge(globbed, pod(true, {}, "kube-system")).matched, false);
    assert.equal(judge(globbed, pod(true, {}, "apps")).failed.length, 1);
});

test("parameters are inlined: the CEL names the constraint's values", () => {
    const c = buildConstraint({ kind: "K8sAllowedRepos", name: "repos", match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] }, parameters: { repos: ["registry.example.com/ops/"] } }, templateRegistry);
    const policy = generateAdmissionPolicies([c]).policies[0];
    assert.equal(policy.spec.paramKind, undefined);
    assert.match(policy.spec.validations[0].expression, /\["registry\.example\.com\/ops\/"\]/);
});

for (const [stack, tier] of [["dev", "dev"], ["prod", "prod"], ["ci", "dev"]] as const) {
    test(`${stack}: every constraint has a policy or a reason; every CEL expression type-checks`, () => {
        const g = stackAdmissionPolicies(stack, tier);
        const gatekeeper = g.policies.filter((p) => p.metadata.name.startsWith("gatekeeper-"));
        assert.equal(gatekeeper.length + g.skipped.length, g.catalogue.constraints.length);
        assert.ok(gatekeeper.length >= 25, `${gatekeeper.length} policies`);
        assert.equal(g.policies.length, g.bindings.length);
        assert.deepEqual(g.skipped.map((s) => s.constraint.split("/")[0]).sort(), ["K8sHorizontalPodAutoscaler", "K8sPodDisruptionBudget", "K8sUniqueIngressHost", "K8sUniqueServiceSelector", "VerifyDeprecatedAPI"]);
        for (const policy of g.policies) {
            const expressions = [...(policy.spec.matchConditions ?? []), ...(policy.spec.variables ?? []), ...policy.spec.validations].map((e: any) => e.expression);
            for (const e of expressions) assert.equal(celCheckError(e), undefined, `${policy.metadata.name}: ${e}`);
            assert.match(policy.metadata.name, /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);
        }
        const spec = g.spec.policies.map((p) => p.metadata.name).sort();
        assert.deepEqual(spec, tier === "prod"
            ? ["spec-hpa-replica-range", "spec-hpa-scale-down-stabilization", "spec-images-pinned-by-digest", "spec-node-port-allowlist", "spec-stateful-guaranteed-qos"]
            : ["spec-hpa-replica-range", "spec-node-port-allowlist"]);
        const excluded = g.policies[0].spec.matchConstraints.namespaceSelector.matchExpressions.find((e: any) => e.operator === "NotIn").values;
        assert.ok(excluded.includes("kube-system") && excluded.includes("gatekeeper-system"), "the Config's exclusions apply");
        assert.ok(!excluded.includes("argocd") && !excluded.includes("monitoring"), "the add-ons' namespaces are judged (issue 19: no blanket namespace exclusion)");
    });
}

test("prod denies images without digest at admission; dev has no such constraint", () => {
    const names = (s: string, t: string) => stackAdmissionPolicies(s, t).bindings.map((b) => `${b.metadata.name}=${b.spec.validationActions}`);
    assert.ok(names("prod", "prod").includes("gatekeeper-k8simagedigests-image-digests=Deny"));
    assert.ok(!names("dev", "dev").some((n) => n.includes("imagedigests")));
    assert.ok(names("dev", "dev").includes("gatekeeper-k8srequiredprobes-required-probes=Warn"));
});

test("every template is either generated or listed with its reason", () => {
    for (const kind of templateRegistry.keys()) assert.ok(admissionRules.has(kind) !== notAtAdmission.has(kind), kind);
});

test("docs/admission.md names every rule that has no admission policy", () => {
    const doc = readFileSync(path.resolve(__dirname, "..", "..", "docs", "admission.md"), "utf8");
    for (const kind of notAtAdmission.keys()) assert.ok(doc.includes(kind), `docs/admission.md does not name ${kind}`);
    for (const name of specNotAtAdmission.keys()) assert.ok(doc.includes(name), `docs/admission.md does not name ${name}`);
});
