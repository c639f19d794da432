import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./externalip";

const PARAMS = { allowedIPs: ["203.0.113.10", "203.0.113.11"] };

function validService(): K8sObject {
    return { apiVersion: "v1", kind: "Service", metadata: { name: "web" }, spec: { ports: [{ port: 80 }], externalIPs: ["203.0.113.10"] } };
}

test("allowed external IPs and services without external IPs pass", () => {
    assert.deepEqual(checkTemplate(rule, validService(), PARAMS), []);
    const plain = validService();
    delete plain.spec.externalIPs;
    assert.deepEqual(checkTemplate(rule, plain, {}), []);
});

test("external IPs outside the allow-list are refused", () => {
    const service = validService();
    service.spec.externalIPs.push("198.51.100.7", "1.1.1.1");
    assert.deepEqual(checkTemplate(rule, service, PARAMS), ['service has forbidden external IPs: {"1.1.1.1", "198.51.100.7"}']);
});

test("the forbidden IPs are listed in Rego's set order: null before strings, numbers by value (issue 21)", () => {
    // gator: "service has forbidden external IPs: {null, \"203.0.113.0\"}" for a null item.
    const service = validService();
    service.spec.externalIPs.push("203.0.113.0", null);
    assert.deepEqual(checkTemplate(rule, service, PARAMS), ['service has forbidden external IPs: {null, "203.0.113.0"}']);
    const numbers = validService();
    numbers.spec.externalIPs = [10, 9, "9"];
    assert.deepEqual(checkTemplate(rule, numbers, {}), ['service has forbidden external IPs: {9, 10, "9"}']);
});
