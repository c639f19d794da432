import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./requiredlabels";

const PARAMS = { labels: [{ key: "owner", allowedRegex: "^[a-zA-Z]+.agilebank.demo$" }, { key: "team" }, { key: "tier", allowedRegex: "" }] };

function validNamespace(): K8sObject {
    return { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", labels: { owner: "me.agilebank.demo", team: "retail", tier: "x" } } };
}

test("required labels with matching values pass (an empty regex accepts any value)", () => {
    assert.deepEqual(checkTemplate(rule, validNamespace(), PARAMS), []);
});

test("missing labels are listed", () => {
    const ns = validNamespace();
    ns.metadata!.labels = { owner: "me.agilebank.demo" };
    assert.deepEqual(checkTemplate(rule, ns, PARAMS), ['you must provide labels: {"team", "tier"}']);
});

test("a value not matching allowedRegex is refused", () => {
    const ns = validNamespace();
    ns.metadata!.labels!.owner = "user";
    assert.deepEqual(checkTemplate(rule, ns, PARAMS), ["Label <owner: user> does not satisfy allowed regex: ^[a-zA-Z]+.agilebank.demo$"]);
});

test("a custom message replaces the default ones", () => {
    const ns = validNamespace();
    delete ns.metadata!.labels;
    assert.deepEqual(checkTemplate(rule, ns, { ...PARAMS, message: "label your namespaces" }), ["label your namespaces"]);
});

// Null, as the library's Rego: a label whose value is null is provided (only false is not), and a
// non-string value matches no allowedRegex, however permissive.
test("a label with a null value is present but satisfies no regex", () => {
    const ns = validNamespace();
    ns.metadata!.labels!.owner = null as unknown as string;
    assert.deepEqual(checkTemplate(rule, ns, { labels: [{ key: "owner", allowedRegex: ".*" }] }), ["Label <owner: null> does not satisfy allowed regex: .*"]);
    assert.deepEqual(checkTemplate(rule, ns, { labels: [{ key: "owner" }] }), []);
});
