import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./capabilities";

const PARAMS: Params = { allowedCapabilities: ["NET_BIND_SERVICE"], requiredDropCapabilities: ["NET_RAW", "SYS_ADMIN"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [
                { name: "nginx", image: "nginx", securityContext: { capabilities: { add: ["NET_BIND_SERVICE"], drop: ["ALL"] } } },
            ],
        },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("allowed additions and dropping ALL pass", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a disallowed addition is reported with the allowed list", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.capabilities.add.push("SYS_ADMIN");
    assert.deepEqual(check(pod), [
        'container <nginx> has a disallowed capability. Allowed capabilities are ["NET_BIND_SERVICE"]',
    ]);
});

test("capability names compare case-insensitively", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.capabilities = { add: ["net_bind_service"], drop: ["net_raw", "Sys_Admin"] };
    assert.deepEqual(check(pod), []);
});

test("not dropping every required capability is reported unless ALL is dropped", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.capabilities.drop = ["NET_RAW"];
    assert.deepEqual(check(pod), [
        'container <nginx> is not dropping all required capabilities. Container must drop all of ["NET_RAW", "SYS_ADMIN"] or "ALL"',
    ]);
});

test("without allowedCapabilities any addition is disallowed and the message says NONE", () => {
    const pod = validPod();
    assert.deepEqual(check(pod, {}), ["container <nginx> has a disallowed capability. Allowed capabilities are NONE"]);
    assert.deepEqual(check(pod, { allowedCapabilities: ["*"] }), []);
});

test("init and ephemeral containers are named as such", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { capabilities: { add: ["SYS_ADMIN"], drop: ["ALL"] } } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", securityContext: { capabilities: { add: ["SYS_PTRACE"], drop: ["ALL"] } } }];
    const messages = check(pod);
    assert.equal(messages.length, 2);
    assert.match(messages[0], /^init container <init> has a disallowed capability/);
    assert.match(messages[1], /^ephemeral container <debug> has a disallowed capability/);
});

test("exemptImages skips matching containers", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "safe.io/nginx";
    pod.spec.containers[0].securityContext.capabilities.add = ["SYS_ADMIN"];
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["safe.io/*"] }), []);
});

// Parameters and messages, as the library's Rego: allowedCapabilities [] prints as [] (get_default
// only falls back to "NONE" when the parameter is absent); no requiredDropCapabilities requires
// nothing; a container without a name has no message, so no violation.
test("allowedCapabilities [] is printed as such, no required drops requires nothing, a nameless container is not reported", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.capabilities.drop = [];
    assert.deepEqual(check(pod, { allowedCapabilities: [] }), ["container <nginx> has a disallowed capability. Allowed capabilities are []"]);
    delete pod.spec.containers[0].name;
    assert.deepEqual(check(pod, { allowedCapabilities: [], requiredDropCapabilities: ["NET_RAW"] }), []);
});

// Null, as the Rego: capabilities.add/drop null hold no capability.
test("capabilities add: null and drop: null count as empty", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.capabilities = { add: null, drop: null };
    assert.deepEqual(check(pod, { requiredDropCapabilities: ["NET_RAW"] }), ['container <nginx> is not dropping all required capabilities. Container must drop all of ["NET_RAW"] or "ALL"']);
    assert.deepEqual(check(pod, {}), []);
});
