import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./block-nodeport-services";

function validService(): K8sObject {
    return { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { ports: [{ port: 80 }] } };
}

test("services without a type (ClusterIP) pass", () => {
    assert.deepEqual(checkTemplate(rule, validService()), []);
});

test("a NodePort service is refused", () => {
    const service = validService();
    service.spec.type = "NodePort";
    assert.deepEqual(checkTemplate(rule, service), ["User is not allowed to create service of type NodePort"]);
});
