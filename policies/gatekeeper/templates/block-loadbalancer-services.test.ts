import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./block-loadbalancer-services";

function validService(): K8sObject {
    return { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { type: "ClusterIP", ports: [{ port: 80 }] } };
}

test("ClusterIP and NodePort services pass", () => {
    assert.deepEqual(checkTemplate(rule, validService()), []);
    const nodePort = validService();
    nodePort.spec.type = "NodePort";
    assert.deepEqual(checkTemplate(rule, nodePort), []);
});

test("a LoadBalancer service is refused", () => {
    const service = validService();
    service.spec.type = "LoadBalancer";
    assert.deepEqual(checkTemplate(rule, service), ["User is not allowed to create service of type LoadBalancer"]);
});
