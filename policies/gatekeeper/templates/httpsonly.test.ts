import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./httpsonly";

function validIngress(): K8sObject {
    return {
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name: "shop", annotations: { "kubernetes.io/ingress.allow-http": "false" } },
        spec: { tls: [{ hosts: ["shop.example.com"], secretName: "shop-tls" }], rules: [{ host: "shop.example.com" }] },
    };
}

const TLS_REQUIRED = "Ingress should be https. tls configuration and allow-http=false annotation are required for shop";

test("TLS and allow-http=false pass", () => {
    assert.deepEqual(checkTemplate(rule, validIngress()), []);
});

test("a missing TLS section or annotation is refused", () => {
    const noTls = validIngress();
    delete noTls.spec.tls;
    assert.deepEqual(checkTemplate(rule, noTls), [TLS_REQUIRED]);
    const httpAllowed = validIngress();
    httpAllowed.metadata!.annotations!["kubernetes.io/ingress.allow-http"] = "true";
    assert.deepEqual(checkTemplate(rule, httpAllowed), [TLS_REQUIRED]);
});

test("tlsOptional only requires the annotation", () => {
    const ingress = validIngress();
    delete ingress.spec.tls;
    assert.deepEqual(checkTemplate(rule, ingress, { tlsOptional: true }), []);
    delete ingress.metadata!.annotations;
    assert.deepEqual(checkTemplate(rule, ingress, { tlsOptional: true }), [
        "Ingress should be https. The allow-http=false annotation is required for shop",
    ]);
});
