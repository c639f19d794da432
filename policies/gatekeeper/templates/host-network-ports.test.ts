import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./host-network-ports";

const PARAMS: Params = { hostNetwork: false, min: 80, max: 9000 };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "nginx", image: "nginx", ports: [{ containerPort: 8080, hostPort: 8080 }] }] },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

const DENIED = 'The specified hostNetwork and hostPort are not allowed, pod: web. Allowed values: {"hostNetwork": false, "max": 9000, "min": 80}';

test("a hostPort inside the range without hostNetwork passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("hostNetwork is reported when not allowed, even for exempt images", () => {
    const pod = validPod();
    pod.spec.hostNetwork = true;
    assert.deepEqual(check(pod), [DENIED]);
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["nginx"] }), [
        'The specified hostNetwork and hostPort are not allowed, pod: web. Allowed values: {"exemptImages": ["nginx"], "hostNetwork": false, "max": 9000, "min": 80}',
    ]);
    assert.deepEqual(check(pod, { ...PARAMS, hostNetwork: true }), []);
});

test("hostPorts outside [min, max] are reported once per pod, in any container kind", () => {
    const pod = validPod();
    pod.spec.containers[0].ports.push({ containerPort: 22, hostPort: 22 }, { containerPort: 9001, hostPort: 9001 });
    assert.deepEqual(check(pod), [DENIED]);
    const ephemeral = validPod();
    ephemeral.spec.ephemeralContainers = [{ name: "debug", image: "busybox", ports: [{ containerPort: 1, hostPort: 1 }] }];
    assert.deepEqual(check(ephemeral), [DENIED]);
});

test("exemptImages skips the hostPort check of matching containers", () => {
    const pod = validPod();
    pod.spec.containers[0].image = "safe.io/nginx";
    pod.spec.containers[0].ports[0].hostPort = 9001;
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["safe.io/*"] }), []);
});

test("ports without hostPort are not checked", () => {
    const pod = validPod();
    pod.spec.containers[0].ports = [{ containerPort: 9999 }];
    assert.deepEqual(check(pod), []);
});

// Null, as the library's Rego (`hostPort < min` with Rego's ordering): hostPort: null is below any
// min; without min and max no port is out of range.
test("hostPort: null is below min; no bounds check nothing", () => {
    const pod = validPod();
    pod.spec.containers[0].ports[0].hostPort = null;
    assert.deepEqual(check(pod), [DENIED]);
    assert.deepEqual(check(pod, { hostNetwork: false, max: 9000 }), []);
    const high = validPod();
    high.spec.containers[0].ports[0].hostPort = 65000;
    assert.deepEqual(check(high, { hostNetwork: false }), []);
});
