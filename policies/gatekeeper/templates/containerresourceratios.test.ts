import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./containerresourceratios";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [
                { name: "app", image: "nginx", resources: { limits: { cpu: "1", memory: "2Gi" }, requests: { cpu: "500m", memory: "1Gi" } } },
            ],
        },
    };
}

test("limits within the ratio of requests pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), { ratio: "2" }), []);
});

test("a memory limit above ratio × request is refused", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits.memory = "4Gi";
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "2" }), [
        "container <app> memory limit <4Gi> is higher than the maximum allowed ratio of <2>",
    ]);
});

test("cpuRatio, when given, replaces ratio for CPU", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits.cpu = "4";
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "2", cpuRatio: "10" }), []);
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "2", cpuRatio: "4" }), [
        "container <app> cpu limit <4> is higher than the maximum allowed ratio of <4>",
    ]);
});

test("without ratio, cpuRatio alone checks nothing: the Rego's object.get(..., input.parameters.ratio) is undefined (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.limits.cpu = "4";
    pod.spec.containers[0].resources.requests.cpu = "50m";
    assert.deepEqual(checkTemplate(rule, pod, { cpuRatio: "10" }), []);
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "100", cpuRatio: "10" }), [
        "container <app> cpu limit <4> is higher than the maximum allowed ratio of <10>",
    ]);
});

test("limits and requests must both be set", () => {
    const pod = validPod();
    delete pod.spec.containers[0].resources.requests;
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "2" }), ["container <app> has no resource requests"]);
});

test("a container without resources gets one message per section, as gator reports (issue 21)", () => {
    const pod = validPod();
    delete pod.spec.containers[0].resources;
    assert.deepEqual(checkTemplate(rule, pod, { ratio: "2" }), ["container <app> has no resource limits", "container <app> has no resource requests"]);
});
