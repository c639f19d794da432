import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./imagedigests";

const DIGEST = "sha256:04ff8fce2afd1a3bc26260348e5b290e8d945b1fad4b4c16d22834c2f3a1814a";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: `busybox@${DIGEST}` }],
            containers: [{ name: "app", image: `nginx:1.25@${DIGEST}` }],
        },
    };
}

test("images pinned by digest pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod()), []);
});

test("an image without a digest is refused, naming the container list", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "nginx:1.25";
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "busybox@sha256" }];
    assert.deepEqual(checkTemplate(rule, pod), [
        "container <app> uses an image without a digest <nginx:1.25>",
        "ephemeralContainer <dbg> uses an image without a digest <busybox@sha256>",
    ]);
});

test("exempt images need no digest", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "registry.example.com/web:1";
    assert.deepEqual(checkTemplate(rule, pod, { exemptImages: ["registry.example.com/*"] }), []);
});

// Absence, as the library's Rego: regex.match over an absent image is undefined and so is the
// message naming it: a container without an image is not reported.
test("a container without an image or a name is not reported", () => {
    const pod = validPod();
    delete pod.spec.containers[0].image;
    assert.deepEqual(checkTemplate(rule, pod), []);
    const unnamed = validPod();
    unnamed.spec.initContainers[0] = { image: "busybox:1" };
    assert.deepEqual(checkTemplate(rule, unnamed), []);
});
