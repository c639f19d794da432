import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./automount-serviceaccount-token";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { automountServiceAccountToken: false, containers: [{ name: "app", image: "nginx" }] },
    };
}

const MESSAGE = "Automounting service account token is disallowed, pod: web";

test("automountServiceAccountToken: false passes", () => {
    assert.deepEqual(checkTemplate(rule, validPod()), []);
});

test("automountServiceAccountToken: true is refused", () => {
    const pod = validPod();
    pod.spec.automountServiceAccountToken = true;
    assert.deepEqual(checkTemplate(rule, pod), [MESSAGE]);
});

test("when the field is absent, mounting the token path by hand is refused", () => {
    const pod = validPod();
    delete pod.spec.automountServiceAccountToken;
    assert.deepEqual(checkTemplate(rule, pod), []);
    pod.spec.initContainers = [
        { name: "init", image: "busybox", volumeMounts: [{ name: "t", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }] },
    ];
    assert.deepEqual(checkTemplate(rule, pod), [MESSAGE]);
});

test("an explicit false wins over a token volume mount", () => {
    const pod = validPod();
    pod.spec.containers[0].volumeMounts = [{ name: "t", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount" }];
    assert.deepEqual(checkTemplate(rule, pod), []);
});
