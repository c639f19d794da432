import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./allowedreposv2";

const PARAMS = { allowedImages: ["registry.example.com/team/*", "ubuntu:22.04"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "ubuntu:22.04" }],
            containers: [{ name: "app", image: "registry.example.com/team/web:1.0" }],
        },
    };
}

test("exact images and images under a prefix ending in * pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("without * the image must match exactly", () => {
    const pod = validPod();
    pod.spec.initContainers[0].image = "ubuntu:22.04-malicious";
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        'initContainer <init> has an invalid image <ubuntu:22.04-malicious>, allowed images are ["registry.example.com/team/*", "ubuntu:22.04"]',
    ]);
});

test("a prefix does not cover a look-alike registry", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "registry.example.com/teamevil/web";
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "busybox" }];
    const messages = checkTemplate(rule, pod, PARAMS);
    assert.equal(messages.length, 2);
    assert.match(messages[0], /^container <app> has an invalid image <registry.example.com\/teamevil\/web>/);
    assert.match(messages[1], /^ephemeralContainer <dbg> has an invalid image <busybox>/);
});

test("without allowedImages there is no violation: Rego's message renders an undefined list, so the rule yields none, as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "docker.io/evil:1";
    assert.deepEqual(checkTemplate(rule, pod, {}), []);
});

test("a container without an image is not reported (the message's sprintf is undefined), as gator reports (issue 21)", () => {
    const pod = validPod();
    delete pod.spec.containers[0].image;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS).filter((m) => m.startsWith("container <app>")), []);
});
