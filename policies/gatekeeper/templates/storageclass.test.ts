import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import { buildConstraint, evaluate } from "../engine";
import { templateRegistry } from ".";
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

// Messages and defaults, as the library's Rego: with allowedStorageClasses the bad-name message is
// the "allowed and valid" one listing the allowed existing classes; "*" (also the default) allows
// every existing class; the missing-name message always lists every existing class.
test("allowedStorageClasses narrows the valid classes, with the library's message", () => {
    assert.deepEqual(checkTemplate(rule, pvc("standard"), { allowedStorageClasses: ["fast"] }, CLASSES), [
        "pvc did not specify an allowed and valid storage class name <standard>. Must be one of [fast]",
    ]);
    assert.deepEqual(checkTemplate(rule, statefulSet("standard"), { allowedStorageClasses: ["fast", "gone"] }, CLASSES), [
        "statefulset did not specify an allowed and valid storage class name <standard>. Must be one of [fast]",
    ]);
    assert.deepEqual(checkTemplate(rule, pvc("standard"), { allowedStorageClasses: ["*"] }, CLASSES), []);
    assert.deepEqual(checkTemplate(rule, pvc(), { allowedStorageClasses: ["fast"] }, CLASSES), ["pvc did not specify a storage class name. Must be one of [fast, standard]"]);
});

// Null, as the Rego: storageClassName: null or "" is present (Rego's `not name` does not hold), so it
// is a bad name, not a missing one; false is both.
test("storageClassName null or empty is an invalid name, not a missing one", () => {
    const withName = (name: unknown) => ({ ...pvc(), spec: { storageClassName: name } }) as K8sObject;
    assert.deepEqual(checkTemplate(rule, withName(null), {}, CLASSES), ["pvc did not specify a valid storage class name <null>. Must be one of [fast, standard]"]);
    assert.deepEqual(checkTemplate(rule, withName(""), {}, CLASSES), ["pvc did not specify a valid storage class name <>. Must be one of [fast, standard]"]);
    assert.deepEqual(checkTemplate(rule, withName(false), { includeStorageClassesInMessage: false }, CLASSES), [
        "pvc did not specify a valid storage class name <false>.",
        "pvc did not specify a storage class name.",
    ]);
});

test("without any StorageClass in the inventory, every matched object is reported", () => {
    assert.deepEqual(checkTemplate(rule, pvc("fast"), {}, []), [
        "StorageClasses not synced. Gatekeeper may be misconfigured. Please have a cluster-admin consult the documentation.",
        "pvc did not specify a valid storage class name <fast>. Must be one of []",
    ]);
});

test("a constraint without parameters gets no defaults (includeStorageClassesInMessage stays unset), as gator reports (issue 21)", () => {
    const constraint = buildConstraint({ kind: rule.kind, name: "test", match: { kinds: [{ apiGroups: [""], kinds: ["PersistentVolumeClaim"] }] } }, templateRegistry);
    const messages = evaluate([pvc()], [constraint], undefined, { inventory: [...CLASSES, pvc()] }).map((r) => r.message);
    assert.deepEqual(messages, ["pvc did not specify a storage class name."]);
});
