import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./privileged-containers";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "nginx", image: "nginx", securityContext: { privileged: false } }] },
    };
}

function check(pod: K8sObject, parameters: Params = {}): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("unprivileged containers pass, with or without securityContext", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox" }];
    assert.deepEqual(check(pod), []);
});

test("a privileged container is reported with its securityContext", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { privileged: true, runAsUser: 0 };
    assert.deepEqual(check(pod), ['Privileged container is not allowed: nginx, securityContext: {"privileged": true, "runAsUser": 0}']);
});

test("init and ephemeral containers are checked", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { privileged: true } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", securityContext: { privileged: true } }];
    assert.deepEqual(check(pod), [
        'Privileged container is not allowed: init, securityContext: {"privileged": true}',
        'Privileged container is not allowed: debug, securityContext: {"privileged": true}',
    ]);
});

test("exemptImages exempts matching images only", () => {
    const pod = validPod();
    pod.spec.containers = [
        { name: "a", image: "safe.io/a", securityContext: { privileged: true } },
        { name: "b", image: "unsafe.io/b", securityContext: { privileged: true } },
    ];
    const messages = check(pod, { exemptImages: ["safe.io/*"] });
    assert.equal(messages.length, 1);
    assert.match(messages[0], /^Privileged container is not allowed: b,/);
});

// Messages, as the library's Rego: no container name, no message, no violation.
test("a privileged container without a name is not reported", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.privileged = true;
    delete pod.spec.containers[0].name;
    assert.deepEqual(check(pod), []);
});
