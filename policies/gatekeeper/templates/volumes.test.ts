import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./volumes";

const PARAMS: Params = { volumes: ["configMap", "emptyDir", "secret"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [{ name: "nginx", image: "nginx" }],
            volumes: [
                { name: "cache", emptyDir: {} },
                { name: "config", configMap: { name: "web-config" } },
            ],
        },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("allowed volume types pass", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a disallowed type is reported once, however many volumes use it", () => {
    const pod = validPod();
    pod.spec.volumes.push({ name: "h1", hostPath: { path: "/a" } }, { name: "h2", hostPath: { path: "/b" } });
    assert.deepEqual(check(pod), [
        'The volume type hostPath is not allowed, pod: web. Allowed volume types: ["configMap", "emptyDir", "secret"]',
    ]);
});

test("* allows every type; an empty list allows none", () => {
    const pod = validPod();
    assert.deepEqual(check(pod, { volumes: ["*"] }), []);
    assert.equal(check(pod, { volumes: [] }).length, 2);
});

// Null, as the library's Rego (`volumes[_][x]` holds for any value but false): a volume type
// present with null is still that type; with false it is not.
test("a volume type set to null is reported, one set to false is not", () => {
    const pod = validPod();
    pod.spec.volumes.push({ name: "host", hostPath: null }, { name: "off", nfs: false });
    assert.deepEqual(check(pod), ['The volume type hostPath is not allowed, pod: web. Allowed volume types: ["configMap", "emptyDir", "secret"]']);
});
