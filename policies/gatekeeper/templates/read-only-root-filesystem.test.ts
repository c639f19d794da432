import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./read-only-root-filesystem";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "nginx", image: "nginx", securityContext: { readOnlyRootFilesystem: true } }] },
    };
}

function check(pod: K8sObject, parameters: Params = {}): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("a read-only root filesystem passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("false, unset or no securityContext is reported", () => {
    const pod = validPod();
    pod.spec.containers.push({ name: "b", image: "b", securityContext: {} }, { name: "c", image: "c" });
    pod.spec.containers[0].securityContext.readOnlyRootFilesystem = false;
    assert.deepEqual(check(pod), [
        "only read-only root filesystem container is allowed: nginx",
        "only read-only root filesystem container is allowed: b",
        "only read-only root filesystem container is allowed: c",
    ]);
});

test("init and ephemeral containers are checked", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox" }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox" }];
    assert.equal(check(pod).length, 2);
});

test("exemptImages: exact, prefix and full wildcard", () => {
    const pod = validPod();
    pod.spec.containers = [{ name: "a", image: "special" }, { name: "b", image: "safe.io/b" }, { name: "c", image: "specialx" }];
    assert.deepEqual(check(pod, { exemptImages: ["special", "safe.io/*"] }), ["only read-only root filesystem container is allowed: c"]);
    assert.deepEqual(check(pod, { exemptImages: ["*"] }), []);
});
