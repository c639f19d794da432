import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./forbidden-sysctls";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            securityContext: { sysctls: [{ name: "net.ipv4.ip_local_port_range", value: "1024 65535" }] },
            containers: [{ name: "nginx", image: "nginx" }],
        },
    };
}

function check(pod: K8sObject, parameters: Params): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("a sysctl that is allowed and not forbidden passes", () => {
    assert.deepEqual(check(validPod(), { forbiddenSysctls: ["kernel.*"], allowedSysctls: ["net.*"] }), []);
});

test("a forbidden sysctl is reported, by prefix or exactly", () => {
    const pod = validPod();
    pod.spec.securityContext.sysctls = [{ name: "kernel.msgmax", value: "65536" }];
    assert.deepEqual(check(pod, { forbiddenSysctls: ["kernel.*"] }), [
        'The sysctl kernel.msgmax is not allowed, pod: web. Forbidden sysctls: ["kernel.*"]',
    ]);
    assert.equal(check(pod, { forbiddenSysctls: ["kernel.msgmax"] }).length, 1);
    assert.equal(check(pod, { forbiddenSysctls: ["kernel.msg"] }).length, 0);
});

test("forbiddenSysctls takes precedence over allowedSysctls", () => {
    assert.deepEqual(check(validPod(), { forbiddenSysctls: ["*"], allowedSysctls: ["*"] }), [
        'The sysctl net.ipv4.ip_local_port_range is not allowed, pod: web. Forbidden sysctls: ["*"]',
    ]);
});

test("given allowedSysctls, a sysctl not in it is reported; an empty list allows nothing", () => {
    assert.deepEqual(check(validPod(), { allowedSysctls: ["kernel.shm_rmid_forced"] }), [
        'The sysctl net.ipv4.ip_local_port_range is not explicitly allowed, pod: web. Allowed sysctls: ["kernel.shm_rmid_forced"]',
    ]);
    assert.equal(check(validPod(), { allowedSysctls: [] }).length, 1);
});

test("without allowedSysctls only forbidden sysctls are reported", () => {
    assert.deepEqual(check(validPod(), { forbiddenSysctls: ["kernel.*"] }), []);
});

// Null, as the library's Rego: a sysctl named null is a value that only "*" matches (no prefix
// applies to it), and it is printed as null.
test("a sysctl whose name is null is matched only by *", () => {
    const pod = validPod();
    pod.spec.securityContext.sysctls = [{ name: null, value: "1" }];
    assert.deepEqual(check(pod, { forbiddenSysctls: ["nu*", "null"] }), []);
    assert.deepEqual(check(pod, { forbiddenSysctls: ["*"] }), ['The sysctl null is not allowed, pod: web. Forbidden sysctls: ["*"]']);
    assert.deepEqual(check(pod, { allowedSysctls: ["nu*"] }), ['The sysctl null is not explicitly allowed, pod: web. Allowed sysctls: ["nu*"]']);
});

// Messages, as the Rego's sprintf: a Pod without metadata.name leaves the message, and the violation, undefined.
test("a Pod without metadata.name is not reported", () => {
    const pod = validPod();
    delete pod.metadata!.name;
    assert.deepEqual(check(pod, { forbiddenSysctls: ["*"] }), []);
});
