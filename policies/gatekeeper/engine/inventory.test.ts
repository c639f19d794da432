import assert from "node:assert/strict";
import { test } from "node:test";
import { buildInventory } from "./inventory";
import { obj } from "./test-support";

const objects = [
    obj("apps/v1", "Deployment", "a", "shop"),
    obj("apps/v1", "Deployment", "b"),
    obj("extensions/v1beta1", "Deployment", "c", "shop"),
    obj("storage.k8s.io/v1", "StorageClass", "fast"),
    obj("v1", "Namespace", "shop", undefined, { team: "retail" }),
];
const names = (list: { metadata?: { name?: string } }[]) => list.map((o) => o.metadata?.name);

test("lists objects by kind, narrowed by API group and namespace", () => {
    const inventory = buildInventory(objects);
    assert.deepEqual(names(inventory.list("Deployment")), ["a", "b", "c"]);
    assert.deepEqual(names(inventory.list("Deployment", { group: "apps" })), ["a", "b"]);
    assert.deepEqual(names(inventory.list("Deployment", { namespace: "shop" })), ["a", "c"]);
    assert.deepEqual(names(inventory.list("Deployment", { group: "apps", namespace: "default" })), ["b"]);
    assert.deepEqual(names(inventory.list("Secret")), []);
});

test("cluster-scoped objects are in no namespace", () => {
    const inventory = buildInventory(objects);
    assert.deepEqual(names(inventory.list("StorageClass")), ["fast"]);
    assert.deepEqual(names(inventory.list("StorageClass", { namespace: "default" })), []);
});

test("namespace labels come from the stack's Namespace objects plus kubernetes.io/metadata.name", () => {
    const inventory = buildInventory(objects);
    assert.deepEqual(inventory.namespaceLabels("shop"), { team: "retail", "kubernetes.io/metadata.name": "shop" });
    assert.deepEqual(inventory.namespaceLabels("other"), { "kubernetes.io/metadata.name": "other" });
});
