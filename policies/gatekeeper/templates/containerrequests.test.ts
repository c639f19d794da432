import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./containerrequests";

const PARAMS = { cpu: "1", memory: "1Gi" };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "app", image: "nginx", resources: { requests: { cpu: "250m", memory: "256Mi" } } }] },
    };
}

test("requests under the maximum pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("requests above the maximum are refused", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.requests = { cpu: "1500m", memory: "256Mi" };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> cpu request <1500m> is higher than the maximum allowed of <1>"]);
});

test("missing requests are refused with one message, as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].resources = { limits: { cpu: "1" } };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> has no resource requests"]);
    delete pod.spec.containers[0].resources;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["container <app> has no resource requests"]);
});

test("an empty request counts as missing", () => {
    const pod = validPod();
    pod.spec.containers[0].resources.requests.memory = "";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        "container <app> has no memory request",
        "container <app> memory request <> could not be parsed",
    ]);
});
