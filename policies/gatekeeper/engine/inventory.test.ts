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

test("gatekeeperData: Gatekeeper's sync layout of the Config's syncOnly kinds only, the same object each time", () => {
    const inventory = buildInventory(objects, undefined, [
        { group: "apps", version: "v1", kind: "Deployment" },
        { group: "", version: "v1", kind: "Namespace" },
    ]);
    const data = inventory.gatekeeperData!() as any;
    assert.deepEqual(Object.keys(data.namespace).sort(), ["default", "shop"]);
    assert.deepEqual(Object.keys(data.namespace.shop["apps/v1"].Deployment), ["a"]);
    assert.deepEqual(Object.keys(data.namespace.default["apps/v1"].Deployment), ["b"]);
    assert.deepEqual(Object.keys(data.cluster), ["v1"]);
    assert.deepEqual(Object.keys(data.cluster.v1.Namespace), ["shop"]);
    assert.equal(data.namespace.shop["extensions/v1beta1"], undefined);
    assert.equal(inventory.gatekeeperData!(), data);
    assert.deepEqual(buildInventory(objects).gatekeeperData!(), { cluster: {}, namespace: {} });
});
