import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./ephemeralstoragelimit";

const PARAMS = { "ephemeral-storage": "500Mi" };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "busybox", resources: { limits: { "ephemeral-storage": "100Mi" } } }],
            containers: [{ name: "app", image: "nginx", resources: { limits: { "ephemeral-storage": "500Mi" } } }],
        },
    };
}

test("ephemeral storage limits up to the maximum pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("a limit above the maximum is refused", () => {
    const pod = validPod();
    pod.spec.initContainers[0].resources.limits["ephemeral-storage"] = "1Gi";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        "container <init> ephemeral-storage limit <1Gi> is higher than the maximum allowed of <500Mi>",
    ]);
});

test("a missing limit is refused", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits = { cpu: "1" };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> has no ephemeral-storage limit"]);
});

test("a container without resources gets one message, not one more for the storage limit, as gator reports (issue 21)", () => {
    const pod = validPod();
    delete pod.spec.containers[0].resources;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> has no resource limits"]);
});
