import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./allow-privilege-escalation";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "busybox", securityContext: { allowPrivilegeEscalation: false } }],
            containers: [{ name: "nginx", image: "nginx", securityContext: { allowPrivilegeEscalation: false } }],
        },
    };
}

function check(pod: K8sObject, parameters: Params = {}): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("containers that forbid escalation pass", () => {
    assert.deepEqual(check(validPod()), []);
});

test("allowPrivilegeEscalation: true is reported by container name", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.allowPrivilegeEscalation = true;
    assert.deepEqual(check(pod), ["Privilege escalation container is not allowed: nginx"]);
});

test("an unset allowPrivilegeEscalation (or no securityContext) counts as allowed escalation", () => {
    const pod = validPod();
    delete pod.spec.containers[0].securityContext;
    delete pod.spec.initContainers[0].securityContext.allowPrivilegeEscalation;
    assert.deepEqual(check(pod), [
        "Privilege escalation container is not allowed: nginx",
        "Privilege escalation container is not allowed: init",
    ]);
});

test("ephemeral containers are checked", () => {
    const pod = validPod();
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox" }];
    assert.deepEqual(check(pod), ["Privilege escalation container is not allowed: debug"]);
});

test("exemptImages exempts exact images and trailing-* prefixes only", () => {
    const pod = validPod();
    pod.spec.containers = [
        { name: "a", image: "safe.io/tools/a:1" },
        { name: "b", image: "nginx" },
        { name: "c", image: "nginx:1.25" },
    ];
    assert.deepEqual(check(pod, { exemptImages: ["safe.io/tools/*", "nginx"] }), [
        "Privilege escalation container is not allowed: c",
    ]);
});
