import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./fsgroup";

const MUST: Params = { rule: "MustRunAs", ranges: [{ min: 1, max: 1000 }] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { securityContext: { fsGroup: 500 }, containers: [{ name: "nginx", image: "nginx" }] },
    };
}

function check(pod: K8sObject, parameters: Params): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("MustRunAs accepts an fsGroup inside a range, bounds included", () => {
    assert.deepEqual(check(validPod(), MUST), []);
    const pod = validPod();
    pod.spec.securityContext.fsGroup = 1000;
    assert.deepEqual(check(pod, MUST), []);
});

test("MustRunAs reports an fsGroup outside the ranges with the parameters", () => {
    const pod = validPod();
    pod.spec.securityContext.fsGroup = 2000;
    assert.deepEqual(check(pod, MUST), [
        'The provided pod spec fsGroup is not allowed, pod: web. Allowed fsGroup: {"ranges": [{"max": 1000, "min": 1}], "rule": "MustRunAs"}',
    ]);
});

test("MustRunAs requires an fsGroup and at least one range", () => {
    const pod = validPod();
    delete pod.spec.securityContext;
    assert.equal(check(pod, MUST).length, 1);
    assert.equal(check(validPod(), { rule: "MustRunAs", ranges: [] }).length, 1);
});

test("MayRunAs accepts an unset fsGroup but not one outside the ranges", () => {
    const may: Params = { rule: "MayRunAs", ranges: [{ min: 1, max: 1000 }] };
    const pod = validPod();
    delete pod.spec.securityContext.fsGroup;
    assert.deepEqual(check(pod, may), []);
    pod.spec.securityContext.fsGroup = 0;
    assert.equal(check(pod, may).length, 1);
});

test("RunAsAny accepts anything", () => {
    const pod = validPod();
    pod.spec.securityContext.fsGroup = 0;
    assert.deepEqual(check(pod, { rule: "RunAsAny" }), []);
});

// Parameter absence, as the library's Rego: the violation requires has_field(parameters, "rule").
test("a constraint with ranges but no rule reports nothing, whatever the fsGroup", () => {
    for (const fsGroup of [500, 2000, 0, null]) {
        const pod = validPod();
        pod.spec.securityContext.fsGroup = fsGroup;
        assert.deepEqual(check(pod, { ranges: [{ min: 1, max: 1000 }] }), [], String(fsGroup));
    }
    assert.deepEqual(check(validPod(), {}), []);
});

// Null, as the Rego: `not spec.securityContext.fsGroup` does not hold for null (null is a value),
// and null is in no range, so MayRunAs reports fsGroup: null; a null securityContext has no fsGroup.
test("MayRunAs: fsGroup null is a value outside every range, securityContext null is unset", () => {
    const may: Params = { rule: "MayRunAs", ranges: [{ min: 1, max: 1000 }] };
    const pod = validPod();
    pod.spec.securityContext.fsGroup = null;
    assert.equal(check(pod, may).length, 1);
    pod.spec.securityContext = null;
    assert.deepEqual(check(pod, may), []);
});
