import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { rule } from "./host-namespaces";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { hostPID: false, hostIPC: false, containers: [{ name: "nginx", image: "nginx" }] },
    };
}

function check(pod: K8sObject): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters: {}, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("no host PID or IPC namespace passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("hostPID or hostIPC is reported once per pod", () => {
    for (const field of ["hostPID", "hostIPC"]) {
        const pod = validPod();
        pod.spec[field] = true;
        assert.deepEqual(check(pod), ["Sharing the host namespace is not allowed: web"], field);
    }
    const both = validPod();
    both.spec.hostPID = true;
    both.spec.hostIPC = true;
    assert.deepEqual(check(both), ["Sharing the host namespace is not allowed: web"]);
});

// Messages, as the library's Rego: the message names the Pod; without metadata.name there is no violation.
test("a Pod without metadata.name sharing the host PID namespace is not reported", () => {
    const pod = validPod();
    pod.spec.hostPID = true;
    assert.equal(check(pod).length, 1);
    delete pod.metadata!.name;
    assert.deepEqual(check(pod), []);
});
