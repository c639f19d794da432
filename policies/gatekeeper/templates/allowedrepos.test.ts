import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./allowedrepos";

const PARAMS = { repos: ["registry.example.com/", "openpolicyagent/"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "openpolicyagent/opa:0.9.2" }],
            containers: [{ name: "app", image: "registry.example.com/web:1.0" }],
            ephemeralContainers: [{ name: "debug", image: "registry.example.com/debug:1" }],
        },
    };
}

test("images from the allowed repos pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("each container list is checked and named in the message", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "nginx";
    pod.spec.initContainers[0].image = "docker.io/busybox";
    pod.spec.ephemeralContainers[0].image = "registry.example.com.evil.io/debug";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        'container <app> has an invalid image repo <nginx>, allowed repos are ["registry.example.com/", "openpolicyagent/"]',
        'initContainer <init> has an invalid image repo <docker.io/busybox>, allowed repos are ["registry.example.com/", "openpolicyagent/"]',
        'ephemeralContainer <debug> has an invalid image repo <registry.example.com.evil.io/debug>, allowed repos are ["registry.example.com/", "openpolicyagent/"]',
    ]);
});

test("with an empty repos list every image is refused", () => {
    assert.equal(checkTemplate(rule, validPod(), { repos: [] }).length, 3);
});

// Messages, as the library's Rego: sprintf over an absent field is undefined, and so is the violation.
test("a container without a name or without an image is not reported (its message cannot be built)", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "docker.io/evil:1";
    delete pod.spec.containers[0].name;
    delete pod.spec.initContainers[0].image;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), []);
    const named = validPod();
    named.spec.containers[0].image = "docker.io/evil:1";
    assert.deepEqual(checkTemplate(rule, named, PARAMS), ['container <app> has an invalid image repo <docker.io/evil:1>, allowed repos are ["registry.example.com/", "openpolicyagent/"]']);
});

test("without repos there is no violation: Rego's message renders an undefined list, so the rule yields none, as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "docker.io/evil:1";
    assert.deepEqual(checkTemplate(rule, pod, {}), []);
});
