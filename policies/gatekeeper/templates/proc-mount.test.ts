import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./proc-mount";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { hostUsers: false, containers: [{ name: "nginx", image: "nginx", securityContext: { procMount: "Default" } }] },
    };
}

function check(pod: K8sObject, parameters: Params = { procMount: "Default" }): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("Default procMount, or none, passes", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox" }];
    assert.deepEqual(check(pod), []);
});

test("Unmasked is reported when only Default is allowed", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.procMount = "Unmasked";
    assert.deepEqual(check(pod), ["ProcMount type is not allowed, container: nginx. Allowed procMount types: default"]);
});

test("a missing or unknown procMount parameter means Default", () => {
    const pod = validPod();
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", securityContext: { procMount: "Unmasked" } }];
    const expected = ["ProcMount type is not allowed, container: debug. Allowed procMount types: default"];
    assert.deepEqual(check(pod, {}), expected);
    assert.deepEqual(check(pod, { procMount: "Bogus" as Params["procMount"] }), expected);
});

test("procMount Unmasked allows everything", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.procMount = "Unmasked";
    assert.deepEqual(check(pod, { procMount: "Unmasked" }), []);
});

test("exemptImages exempts matching containers", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.procMount = "Unmasked";
    assert.deepEqual(check(pod, { procMount: "Default", exemptImages: ["nginx"] }), []);
});

// Null, as the library's Rego: containers are selected with `securityContext.procMount != null`.
test("procMount: null counts as absent, in every container list", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.procMount = null;
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { procMount: null } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", securityContext: null }];
    assert.deepEqual(check(pod), []);
    assert.deepEqual(check(pod, {}), []);
});
