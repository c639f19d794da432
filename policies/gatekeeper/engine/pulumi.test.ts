import assert from "node:assert/strict";
import { test } from "node:test";
import { k8sObjectFromPulumi } from "./pulumi";

test("maps a Pulumi Kubernetes resource to its object, filling apiVersion and kind from the type", () => {
    assert.deepEqual(k8sObjectFromPulumi("kubernetes:apps/v1:Deployment", { metadata: { name: "d" } }), {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "d" },
    });
    assert.deepEqual(k8sObjectFromPulumi("kubernetes:core/v1:Pod", { metadata: { name: "p" } }), {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "p" },
    });
});

test("keeps the props object as is when it already names apiVersion and kind", () => {
    const props = { apiVersion: "v1", kind: "Service", metadata: { name: "s" } };
    assert.equal(k8sObjectFromPulumi("kubernetes:core/v1:Service", props), props);
});

test("ignores resources that are not Kubernetes objects", () => {
    assert.equal(k8sObjectFromPulumi("random:index/randomPassword:RandomPassword", {}), undefined);
    assert.equal(k8sObjectFromPulumi("kubernetes:helm.sh/v3:Release", {}), undefined);
    assert.equal(k8sObjectFromPulumi("kubernetes:yaml/v2:ConfigGroup", {}), undefined);
    assert.equal(k8sObjectFromPulumi("kubernetes:yaml:ConfigFile", {}), undefined);
    assert.equal(k8sObjectFromPulumi("pulumi:providers:kubernetes", {}), undefined);
});
