import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./flexvolume-drivers";

const PARAMS: Params = { allowedFlexVolumes: [{ driver: "example/lvm" }] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [{ name: "nginx", image: "nginx", volumeMounts: [{ name: "data", mountPath: "/data" }] }],
            volumes: [
                { name: "data", flexVolume: { driver: "example/lvm" } },
                { name: "cache", emptyDir: {} },
            ],
        },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("an allowed driver passes and other volume types are ignored", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a driver not in the list is reported with the volume and the allowed drivers", () => {
    const pod = validPod();
    pod.spec.volumes[0].flexVolume.driver = "example/other";
    assert.deepEqual(check(pod), [
        'FlexVolume {"flexVolume": {"driver": "example/other"}, "name": "data"} is not allowed, pod: web. Allowed drivers: [{"driver": "example/lvm"}]',
    ]);
});

test("an empty allow-list rejects every flexVolume", () => {
    assert.equal(check(validPod(), { allowedFlexVolumes: [] }).length, 1);
});
