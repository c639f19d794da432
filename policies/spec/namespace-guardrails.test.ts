import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./namespace-guardrails";

function stack(): K8sObject[] {
    return [
        { apiVersion: "v1", kind: "Namespace", metadata: { name: "apps" } },
        { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name: "default-deny", namespace: "apps" }, spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] } },
        { apiVersion: "v1", kind: "LimitRange", metadata: { name: "defaults", namespace: "apps" }, spec: { limits: [{ type: "Container", default: { memory: "512Mi" }, defaultRequest: { memory: "256Mi" } }] } },
    ];
}

test("a namespace with a default-deny policy and container defaults passes", () => {
    assert.deepEqual(messagesOf(rule, stack()), []);
});

test("a namespace without a default-deny NetworkPolicy fails; one direction or a pod selector is not default-deny", () => {
    const [ns, np, lr] = stack();
    assert.match(messagesOf(rule, [ns, lr])[0], /no default-deny NetworkPolicy/);
    np.spec.policyTypes = ["Ingress"];
    assert.equal(messagesOf(rule, [ns, np, lr]).length, 1);
    np.spec.policyTypes = ["Ingress", "Egress"];
    np.spec.podSelector = { matchLabels: { app: "web" } };
    assert.equal(messagesOf(rule, [ns, np, lr]).length, 1);
    np.spec.podSelector = {};
    np.spec.ingress = [{ from: [{ podSelector: {} }] }];
    assert.equal(messagesOf(rule, [ns, np, lr]).length, 1);
});

test("a namespace without a LimitRange with Container memory defaults fails", () => {
    const [ns, np, lr] = stack();
    assert.match(messagesOf(rule, [ns, np])[0], /no LimitRange/);
    delete lr.spec.limits[0].defaultRequest;
    assert.equal(messagesOf(rule, [ns, np, lr]).length, 1);
});

test("guardrails in another namespace do not count; excluded namespaces are skipped", () => {
    const [ns, np, lr] = stack();
    np.metadata!.namespace = "other";
    lr.metadata!.namespace = "other";
    assert.equal(messagesOf(rule, [ns, np, lr]).length, 2);
    assert.deepEqual(messagesOf(rule, [ns], { excludedNamespaces: ["apps"] }), []);
});
