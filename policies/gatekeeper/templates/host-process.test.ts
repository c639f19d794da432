import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./host-process";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "win" },
        spec: {
            securityContext: { windowsOptions: { hostProcess: false } },
            containers: [{ name: "app", image: "mcr.microsoft.com/app", securityContext: { windowsOptions: { runAsUserName: "app" } } }],
        },
    };
}

function check(pod: K8sObject, parameters: Params = {}): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("no hostProcess passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("pod-level hostProcess is reported by pod name, whatever exemptImages says", () => {
    const pod = validPod();
    pod.spec.securityContext.windowsOptions.hostProcess = true;
    assert.deepEqual(check(pod, { exemptImages: ["mcr.microsoft.com/*"] }), ["HostProcess is not allowed at pod level: win"]);
});

test("container-level hostProcess is reported for every container kind", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.windowsOptions.hostProcess = true;
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { windowsOptions: { hostProcess: true } } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", securityContext: { windowsOptions: { hostProcess: true } } }];
    assert.deepEqual(check(pod), [
        "HostProcess container is not allowed: app, securityContext.windowsOptions.hostProcess: true",
        "HostProcess container is not allowed: init, securityContext.windowsOptions.hostProcess: true",
        "HostProcess container is not allowed: debug, securityContext.windowsOptions.hostProcess: true",
    ]);
});

test("exemptImages exempts containers", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.windowsOptions.hostProcess = true;
    assert.deepEqual(check(pod, { exemptImages: ["mcr.microsoft.com/*"] }), []);
});
