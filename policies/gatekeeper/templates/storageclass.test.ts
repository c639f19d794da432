import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./storageclass";

const storageClass = (name: string): K8sObject => ({ apiVersion: "storage.k8s.io/v1", kind: "StorageClass", metadata: { name }, provisioner: "x" });
const CLASSES = [storageClass("standard"), storageClass("fast")];

function pvc(storageClassName?: string): K8sObject {
    return { apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data" }, spec: { storageClassName } };
}

function statefulSet(...classNames: Array<string | undefined>): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { name: "db" },
        spec: { volumeClaimTemplates: classNames.map((storageClassName, i) => ({ metadata: { name: `v${i}` }, spec: { storageClassName } })) },
    };
}

test("claims naming a StorageClass of the stack pass", () => {
    assert.deepEqual(checkTemplate(rule, pvc("fast"), {}, CLASSES), []);
    assert.deepEqual(checkTemplate(rule, statefulSet("standard", "fast"), {}, CLASSES), []);
});

test("an unknown storage class is refused, listing the known ones", () => {
    assert.deepEqual(checkTemplate(rule, pvc("slow"), {}, CLASSES), ["pvc did not specify a valid storage class name <slow>. Must be one of [fast, standard]"]);
    assert.deepEqual(checkTemplate(rule, statefulSet("fast", "slow"), { includeStorageClassesInMessage: false }, CLASSES), [
        "statefulset did not specify a valid storage class name <slow>.",
    ]);
});

test("a claim without a storage class name is refused", () => {
    assert.deepEqual(checkTemplate(rule, pvc(), {}, CLASSES), ["pvc did not specify a storage class name. Must be one of [fast, standard]"]);
    assert.deepEqual(checkTemplate(rule, statefulSet(undefined), {}, CLASSES), [
        "statefulset did not specify a storage class name. Must be one of [fast, standard]",
    ]);
});

test("allowedStorageClasses narrows the valid classes", () => {
    assert.deepEqual(checkTemplate(rule, pvc("standard"), { allowedStorageClasses: ["fast"] }, CLASSES), [
        "pvc did not specify a valid storage class name <standard>. Must be one of [fast]",
    ]);
});

test("without any StorageClass in the inventory, every matched object is reported", () => {
    assert.deepEqual(checkTemplate(rule, pvc("fast"), {}, []), [
        "StorageClasses not synced. Gatekeeper may be misconfigured. Please have a cluster-admin consult the documentation.",
        "pvc did not specify a valid storage class name <fast>. Must be one of []",
    ]);
});
