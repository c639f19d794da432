import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./disallowinteractive";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "app", image: "nginx", stdin: false, tty: false }, { name: "side", image: "envoy" }] },
    };
}

test("stdin and tty false or unset pass", () => {
    assert.deepEqual(checkTemplate(rule, validPod()), []);
});

test("stdin or tty on is refused, once per container", () => {
    const pod = validPod();
    pod.spec.containers[0].tty = true;
    pod.spec.containers[0].stdin = true;
    pod.spec.ephemeralContainers = [{ name: "dbg", image: "busybox", stdin: true }];
    assert.deepEqual(checkTemplate(rule, pod), [
        "Containers using tty or stdin (app) are not allowed running image: nginx",
        "Containers using tty or stdin (dbg) are not allowed running image: busybox",
    ]);
});

test("exempt images may be interactive", () => {
    const pod = validPod();
    pod.spec.containers[1].tty = true;
    assert.deepEqual(checkTemplate(rule, pod, { exemptImages: ["env*"] }), []);
});

test("a container without an image is not reported (the message's sprintf is undefined), as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[0].tty = true;
    delete pod.spec.containers[0].image;
    assert.deepEqual(checkTemplate(rule, pod), []);
});

test("stdin: null counts as on (has_field sees a defined value that is not false), as gator reports (issue 21)", () => {
    const pod = validPod();
    pod.spec.containers[1].stdin = null;
    assert.deepEqual(checkTemplate(rule, pod), ["Containers using tty or stdin (side) are not allowed running image: envoy"]);
});
