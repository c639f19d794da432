import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./users";

const RANGE = [{ min: 100, max: 200 }];

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            securityContext: { runAsUser: 150, runAsGroup: 150, supplementalGroups: [150], fsGroup: 150 },
            containers: [{ name: "nginx", image: "nginx" }],
        },
    };
}

function check(pod: K8sObject, parameters: Params): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

const MUST_ALL: Params = {
    runAsUser: { rule: "MustRunAs", ranges: RANGE },
    runAsGroup: { rule: "MustRunAs", ranges: RANGE },
    supplementalGroups: { rule: "MustRunAs", ranges: RANGE },
    fsGroup: { rule: "MustRunAs", ranges: RANGE },
};

test("pod-level IDs inside the ranges pass", () => {
    assert.deepEqual(check(validPod(), MUST_ALL), []);
});

test("a container-level ID overrides the pod-level one", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { runAsUser: 250 };
    assert.deepEqual(check(pod, MUST_ALL), [
        'Container nginx is attempting to run as disallowed user 250. Allowed runAsUser: {"ranges": [{"max": 200, "min": 100}], "rule": "MustRunAs"}',
    ]);
    pod.spec.securityContext.runAsUser = 5;
    pod.spec.containers[0].securityContext.runAsUser = 120;
    assert.deepEqual(check(pod, MUST_ALL), []);
});

test("group fields out of range are reported per field", () => {
    const pod = validPod();
    pod.spec.securityContext = { runAsUser: 150, runAsGroup: 5, supplementalGroups: [150, 300], fsGroup: 150 };
    assert.deepEqual(check(pod, MUST_ALL), [
        'Container nginx is attempting to run as disallowed group 5. Allowed runAsGroup: {"ranges": [{"max": 200, "min": 100}], "rule": "MustRunAs"}',
        'Container nginx is attempting to run with disallowed supplementalGroups [150, 300]. Allowed supplementalGroups: {"ranges": [{"max": 200, "min": 100}], "rule": "MustRunAs"}',
    ]);
});

test("MustRunAs requires the field to be set", () => {
    const pod = validPod();
    delete pod.spec.securityContext;
    assert.deepEqual(check(pod, { runAsUser: MUST_ALL.runAsUser, fsGroup: MUST_ALL.fsGroup }), [
        "Container nginx is attempting to run without a required securityContext/runAsUser",
        'Container nginx is attempting to run without a required securityContext/fsGroup. Allowed fsGroup: {"ranges": [{"max": 200, "min": 100}], "rule": "MustRunAs"}',
    ]);
});

test("MayRunAs accepts an unset field but not one out of range", () => {
    const may: Params = { runAsGroup: { rule: "MayRunAs", ranges: RANGE } };
    const pod = validPod();
    delete pod.spec.securityContext.runAsGroup;
    assert.deepEqual(check(pod, may), []);
    pod.spec.securityContext.runAsGroup = 0;
    assert.equal(check(pod, may).length, 1);
});

test("MustRunAsNonRoot rejects user 0 and a container without runAsNonRoot or runAsUser", () => {
    const nonRoot: Params = { runAsUser: { rule: "MustRunAsNonRoot" } };
    const pod = validPod();
    pod.spec.securityContext = { runAsUser: 0 };
    assert.deepEqual(check(pod, nonRoot), [
        'Container nginx is attempting to run as disallowed user 0. Allowed runAsUser: {"rule": "MustRunAsNonRoot"}',
    ]);
    delete pod.spec.securityContext.runAsUser;
    assert.deepEqual(check(pod, nonRoot), [
        "Container nginx is attempting to run without a required securityContext/runAsNonRoot or securityContext/runAsUser != 0",
    ]);
    pod.spec.securityContext.runAsNonRoot = true;
    assert.deepEqual(check(pod, nonRoot), []);
    pod.spec.containers[0].securityContext = { runAsNonRoot: false };
    assert.equal(check(pod, nonRoot).length, 1);
});

test("RunAsAny accepts anything, with or without ranges", () => {
    const pod = validPod();
    pod.spec.securityContext = { runAsUser: 0, runAsGroup: 0 };
    assert.deepEqual(check(pod, { runAsUser: { rule: "RunAsAny" }, runAsGroup: { rule: "RunAsAny" } }), []);
});

test("init and ephemeral containers are checked; exemptImages skips containers", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { runAsUser: 0 } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "tools.io/debug", securityContext: { runAsUser: 0 } }];
    const params: Params = { runAsUser: { rule: "MustRunAsNonRoot" } };
    assert.deepEqual(check(pod, params), [
        'Container init is attempting to run as disallowed user 0. Allowed runAsUser: {"rule": "MustRunAsNonRoot"}',
        'Container debug is attempting to run as disallowed user 0. Allowed runAsUser: {"rule": "MustRunAsNonRoot"}',
    ]);
    assert.equal(check(pod, { ...params, exemptImages: ["tools.io/*", "busybox"] }).length, 0);
});
