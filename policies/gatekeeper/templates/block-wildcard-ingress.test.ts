import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./block-wildcard-ingress";

const backend = { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] };

function validIngress(): K8sObject {
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "web" },
        spec: { rules: [{ host: "shop.example.com", http: backend }] },
    };
}

test("explicit hostnames pass", () => {
    assert.deepEqual(checkTemplate(rule, validIngress()), []);
});

test("wildcard, blank and omitted hosts are refused", () => {
    const ingress = validIngress();
    ingress.spec.rules.push({ host: "*.example.com", http: backend }, { host: "", http: backend }, { http: backend });
    assert.deepEqual(checkTemplate(rule, ingress), [
        "Hostname '*.example.com' is not allowed since it counts as a wildcard, which can be used to intercept traffic from other applications.",
        "Hostname '' is not allowed since it counts as a wildcard, which can be used to intercept traffic from other applications.",
    ]);
});

test("a rule that is null or a host that is null yields no violation (object.get and contains() are undefined there), as gator reports (issue 21)", () => {
    const ingress: K8sObject = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "i" }, spec: { rules: [null, { host: null }, {}] } };
    assert.deepEqual(checkTemplate(rule, ingress), [
        "Hostname '' is not allowed since it counts as a wildcard, which can be used to intercept traffic from other applications.",
    ]);
});
