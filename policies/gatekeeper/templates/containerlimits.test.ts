import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./containerlimits";

const PARAMS = { cpu: "500m", memory: "1Gi" };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "busybox", resources: { limits: { cpu: "100m", memory: "64Mi" } } }],
            containers: [{ name: "app", image: "nginx", resources: { limits: { cpu: "0.5", memory: "1Gi" } } }],
        },
    };
}

test("limits at or under the maximum pass (the maximum is exclusive of violations)", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("limits above the maximum are refused", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits = { cpu: "2", memory: "2Gi" };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        "container <app> cpu limit <2> is higher than the maximum allowed of <500m>",
        "container <app> memory limit <2Gi> is higher than the maximum allowed of <1Gi>",
    ]);
});

test("missing limits are refused with one message, for init containers too, as gator reports (issue 21)", () => {
    // missing(container.resources.limits, "cpu") is undefined when limits is: no per-resource message.
    const pod = validPod();
    delete pod.spec.initContainers[0].resources;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <init> has no resource limits"]);
    pod.spec.initContainers[0].resources = {};
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <init> has no resource limits"]);
    pod.spec.initContainers[0].resources = { limits: {} };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <init> has no cpu limit", "container <init> has no memory limit"]);
});

test("without the cpu parameter no CPU rule applies (`input.parameters.cpu != \"-1\"` is undefined), as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits = { memory: "512Mi" };
    assert.deepEqual(checkTemplate(rule, pod, { memory: "1Gi" }), []);
});

test("unparseable limits are reported", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits.memory = "1GB";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> memory limit <1GB> could not be parsed"]);
});

test('cpu: "-1" turns the CPU checks off', () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits = { memory: "512Mi" };
    assert.deepEqual(checkTemplate(rule, pod, { cpu: "-1", memory: "1Gi" }), []);
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> has no cpu limit"]);
});

test("exempt images and ephemeral containers are not checked", () => {
    const pod = validPod();
    pod.spec.containers[0].resources = {};
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "busybox" }];
    assert.deepEqual(checkTemplate(rule, pod, { ...PARAMS, exemptImages: ["nginx"] }), []);
});
