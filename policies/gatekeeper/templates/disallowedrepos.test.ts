import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./disallowedrepos";

const PARAMS = { repos: ["k8s.gcr.io/", "docker.io/"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "registry.k8s.io/pause:3.9" }],
            containers: [{ name: "app", image: "registry.example.com/web:1" }],
        },
    };
}

test("images outside the disallowed repos pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("an image from a disallowed repo is refused, in any container list", () => {
    const pod = validPod();
    pod.spec.initContainers[0].image = "k8s.gcr.io/pause:3.1";
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "docker.io/busybox" }];
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        'initContainer <init> has an invalid image repo <k8s.gcr.io/pause:3.1>, disallowed repos are ["k8s.gcr.io/", "docker.io/"]',
        'ephemeralContainer <dbg> has an invalid image repo <docker.io/busybox>, disallowed repos are ["k8s.gcr.io/", "docker.io/"]',
    ]);
});
