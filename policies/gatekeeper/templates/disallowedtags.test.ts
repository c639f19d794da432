import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./disallowedtags";

const PARAMS = { tags: ["latest", "dev"], exemptImages: ["registry.example.com/tools/*"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "registry.example.com:5000/init:1.2" }],
            containers: [{ name: "app", image: "nginx:1.25" }],
        },
    };
}

test("images with an allowed tag pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("a disallowed tag is refused", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "nginx:latest";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        'container <app> uses a disallowed tag <nginx:latest>; disallowed tags are ["latest", "dev"]',
    ]);
});

test("an image without a tag is refused, even when its registry has a port", () => {
    const pod = validPod();
    pod.spec.initContainers[0].image = "registry.example.com:5000/init";
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "busybox" }];
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        "container <init> didn't specify an image tag <registry.example.com:5000/init>",
        "container <dbg> didn't specify an image tag <busybox>",
    ]);
});

test("a digest counts as pinned and exempt images are skipped", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "nginx@sha256:04ff8fce2afd1a3bc26260348e5b290e8d945b1fad4b4c16d22834c2f3a1814a";
    pod.spec.containers.push({ name: "tool", image: "registry.example.com/tools/jq:latest" });
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), []);
});

// Messages, as the library's Rego: a container without a name (or image) has no message, so no violation.
test("a container without a name is not reported, even with a disallowed tag", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "nginx:latest";
    assert.equal(checkTemplate(rule, pod, PARAMS).length, 1);
    delete pod.spec.containers[0].name;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), []);
});

test("an image that is null or absent yields no violation (split and any_suffix_match fail on it), as gator reports (issue 21)", () => {
    const pod: K8sObject = { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "a", image: null }, { name: "b" }] } };
    assert.deepEqual(checkTemplate(rule, pod, { tags: ["latest"] }), []);
});
