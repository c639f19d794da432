import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { type Params, rule } from "./host-filesystem";

const PARAMS: Params = { allowedHostPaths: [{ pathPrefix: "/foo", readOnly: true }] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [{ name: "nginx", image: "nginx", volumeMounts: [{ name: "host", mountPath: "/cache", readOnly: true }] }],
            volumes: [{ name: "host", hostPath: { path: "/foo/bar" } }],
        },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("a hostPath under an allowed prefix, mounted read-only, passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a hostPath outside the prefixes is reported with the volume and the allowed paths", () => {
    const pod = validPod();
    pod.spec.volumes[0].hostPath.path = "/fool";
    assert.deepEqual(check(pod), [
        'HostPath volume {"hostPath": {"path": "/fool"}, "name": "host"} is not allowed, pod: web. Allowed path: [{"pathPrefix": "/foo", "readOnly": true}]',
    ]);
});

test("prefixes match whole path segments", () => {
    const pod = validPod();
    for (const path of ["/foo", "/foo/", "/foo/bar/baz"]) {
        pod.spec.volumes[0].hostPath.path = path;
        assert.deepEqual(check(pod), [], path);
    }
    pod.spec.volumes[0].hostPath.path = "/etc/foo";
    assert.equal(check(pod).length, 1);
    assert.deepEqual(check(pod, { allowedHostPaths: [{ pathPrefix: "/" }] }), []);
});

test("a readOnly prefix rejects a writable mount by any container kind", () => {
    const pod = validPod();
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", volumeMounts: [{ name: "host", mountPath: "/h" }] }];
    assert.equal(check(pod).length, 1);
    assert.deepEqual(check(pod, { allowedHostPaths: [{ pathPrefix: "/foo", readOnly: false }] }), []);
});

test("without allowedHostPaths every hostPath volume is reported, other volumes are not", () => {
    const pod = validPod();
    pod.spec.volumes.push({ name: "tmp", emptyDir: {} });
    assert.deepEqual(check(pod, {}), [
        'HostPath volume {"hostPath": {"path": "/foo/bar"}, "name": "host"} is not allowed, pod: web. Allowed path: []',
    ]);
});

// Absence, as the library's Rego: a read-only allowance holds for a volume without a name, since
// no mount can be found writable for it (the call with an undefined name is undefined).
test("a nameless hostPath volume under a readOnly prefix is allowed even if some mount is writable", () => {
    const pod: K8sObject = {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "c", image: "nginx", volumeMounts: [{ mountPath: "/x" }] }], volumes: [{ hostPath: { path: "/var/log/app" } }] },
    };
    assert.deepEqual(checkTemplate(rule, pod, { allowedHostPaths: [{ pathPrefix: "/var/log", readOnly: true }] }), []);
});
