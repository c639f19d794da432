import assert from "node:assert/strict";
import { test } from "node:test";
import { checkAgreement, decodedJson } from "./agreement";
import { buildConstraint } from "../gatekeeper/engine";
import { templateRegistry } from "../gatekeeper/templates";
import { generateAdmissionPolicies } from "./generate";
import { admit } from "./simulate";

const pod = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: "web" }) => ({ apiVersion: "v1", kind: "Pod", metadata, spec });
const podMatch = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] };

test("the object as the API server decodes it: nulls dropped, a null label or annotation is \"\"", () => {
    assert.deepEqual(
        decodedJson({ metadata: { labels: { a: null, b: "x" }, annotations: { c: null } }, spec: { securityContext: { fsGroup: null }, list: [null, { x: null, y: 1 }] } }),
        { metadata: { labels: { a: "", b: "x" }, annotations: { c: "" } }, spec: { securityContext: {}, list: [{ y: 1 }] } },
    );
});

test("a difference that only a null makes is reported apart, not as agreement", () => {
    const r = checkAgreement({
        id: "fsgroup null",
        constraint: { kind: "K8sPSPFSGroup", name: "t", match: podMatch, parameters: { rule: "MayRunAs", ranges: [{ min: 1, max: 1000 }] } },
        object: pod({ securityContext: { fsGroup: null }, containers: [{ name: "c", image: "nginx" }] }),
    });
    assert.equal(r.crossGuard, true);
    assert.equal(r.admission, false);
    assert.equal(r.agree, false);
    assert.equal(r.nullOnly, true);
});

test("a container without a name is not reported at admission either (the library's message cannot be built)", () => {
    const constraint = buildConstraint({ kind: "K8sAllowedRepos", name: "t", match: podMatch, parameters: { repos: ["registry.example.com/"] } }, templateRegistry);
    const { policies, bindings } = generateAdmissionPolicies([constraint]);
    assert.deepEqual(admit(policies[0], bindings[0], pod({ containers: [{ image: "docker.io/evil:1" }] })).failed, []);
    assert.equal(admit(policies[0], bindings[0], pod({ containers: [{ name: "c", image: "docker.io/evil:1" }] })).failed.length, 1);
});

test("K8sReplicaLimits refuses an absent spec.replicas; an object without metadata.name passes", () => {
    const constraint = buildConstraint({ kind: "K8sReplicaLimits", name: "t", match: { kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] }, parameters: { ranges: [{ min_replicas: 2, max_replicas: 5 }] } }, templateRegistry);
    const { policies, bindings } = generateAdmissionPolicies([constraint]);
    const dep = (metadata: Record<string, unknown>, spec: Record<string, unknown>) => ({ apiVersion: "apps/v1", kind: "Deployment", metadata, spec });
    assert.equal(admit(policies[0], bindings[0], dep({ name: "web" }, { template: {} })).failed.length, 1);
    assert.deepEqual(admit(policies[0], bindings[0], dep({ name: "web" }, { replicas: 3, template: {} })).failed, []);
    assert.deepEqual(admit(policies[0], bindings[0], dep({}, { replicas: 7, template: {} })).failed, []);
});

test("K8sPSPFSGroup without rule reports nothing: no policy", () => {
    const constraint = buildConstraint({ kind: "K8sPSPFSGroup", name: "t", match: podMatch, parameters: { ranges: [{ min: 1, max: 1000 }] } }, templateRegistry);
    assert.equal(generateAdmissionPolicies([constraint]).policies.length, 0);
});
