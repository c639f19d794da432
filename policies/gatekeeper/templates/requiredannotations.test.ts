import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./requiredannotations";

const PARAMS = { annotations: [{ key: "owner", allowedRegex: "^[a-z]+@example\\.com$" }, { key: "runbook" }] };

function validService(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "web", annotations: { owner: "team@example.com", runbook: "https://wiki/web" } },
        spec: {},
    };
}

test("all annotations present with matching values pass", () => {
    assert.deepEqual(checkTemplate(rule, validService(), PARAMS), []);
});

test("missing annotations are listed", () => {
    const service = validService();
    service.metadata!.annotations = {};
    assert.deepEqual(checkTemplate(rule, service, PARAMS), ['you must provide annotation(s): {"owner", "runbook"}']);
});

test("a value not matching allowedRegex is refused", () => {
    const service = validService();
    service.metadata!.annotations!.owner = "someone@elsewhere.org";
    assert.deepEqual(checkTemplate(rule, service, PARAMS), [
        "Annotation <owner: someone@elsewhere.org> does not satisfy allowed regex: ^[a-z]+@example\\.com$",
    ]);
});

// Parameters, as the library's Rego: the schema has `message`, but the annotations Rego never reads it.
test("the message parameter does not change the library's messages", () => {
    const service = validService();
    delete service.metadata!.annotations;
    assert.deepEqual(checkTemplate(rule, service, { ...PARAMS, message: "annotate your services" }), ['you must provide annotation(s): {"owner", "runbook"}']);
});

// Null, as the Rego: a null value is present (not missing) and, not being a string, matches no regex.
test("an annotation with a null value is present but does not satisfy a regex", () => {
    const service = validService();
    service.metadata!.annotations!.owner = null as unknown as string;
    assert.deepEqual(checkTemplate(rule, service, PARAMS), ["Annotation <owner: null> does not satisfy allowed regex: ^[a-z]+@example\\.com$"]);
    service.metadata!.annotations!.runbook = null as unknown as string;
    assert.equal(checkTemplate(rule, service, { annotations: [{ key: "runbook" }] }).length, 0);
});
