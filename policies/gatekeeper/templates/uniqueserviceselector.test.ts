import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./uniqueserviceselector";

function service(name: string, selector?: Record<string, string>, namespace = "shop"): K8sObject {
    return { apiVersion: "v1", kind: "Service", metadata: { name, namespace }, spec: { ports: [{ port: 80 }], selector } };
}

test("distinct selectors pass, even when they share a key/value pair", () => {
    const others = [service("db", { app: "shop", tier: "db" })];
    assert.deepEqual(checkTemplate(rule, service("web", { app: "shop", tier: "web" }), {}, others), []);
});

test("the same selector as another Service of the namespace is refused", () => {
    const others = [service("web-old", { tier: "web", app: "shop" })];
    assert.deepEqual(checkTemplate(rule, service("web", { app: "shop", tier: "web" }), {}, others), [
        "same selector as service <web-old> in namespace <shop>",
    ]);
});

test("Services of other namespaces and Services without a selector are compared too, as gator reports (issue 21)", () => {
    // The Rego iterates data.inventory.namespace[namespace] over every namespace, and an absent
    // selector flattens to "" like any other absent one; a null value drops its pair (concat fails).
    assert.deepEqual(checkTemplate(rule, service("web", { app: "shop" }), {}, [service("web", { app: "shop" }, "staging")]), [
        "same selector as service <web> in namespace <staging>",
    ]);
    assert.deepEqual(checkTemplate(rule, service("ext"), {}, [service("ext2")]), ["same selector as service <ext2> in namespace <shop>"]);
    assert.deepEqual(checkTemplate(rule, service("n", { app: null as unknown as string }), {}, [service("ext2")]), ["same selector as service <ext2> in namespace <shop>"]);
});
