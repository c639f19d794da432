import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./containerresources";

const PARAMS = { limits: ["cpu", "memory"], requests: ["memory"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [{ name: "app", image: "nginx", resources: { limits: { cpu: "1", memory: "1Gi" }, requests: { memory: "512Mi" } } }],
        },
    };
}

test("all required limits and requests defined pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("missing limits and requests are listed as sets", () => {
    const pod = validPod();
    pod.spec.containers[0].resources = {};
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        'container <app> does not have <{"cpu", "memory"}> limits defined',
        'container <app> does not have <{"memory"}> requests defined',
    ]);
});

test("nothing is required without parameters, and exempt images are skipped", () => {
    const pod = validPod();
    pod.spec.containers[0].resources = {};
    assert.deepEqual(checkTemplate(rule, pod, {}), []);
    assert.deepEqual(checkTemplate(rule, pod, { ...PARAMS, exemptImages: ["ngin*"] }), []);
});

test("only cpu and memory are accepted resource names", () => {
    assert.throws(() => checkTemplate(rule, validPod(), { limits: ["storage"] }), /must be one of "cpu", "memory"/);
});
