import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./ingress-tls-issuer";

const ingress = (): K8sObject => ({
    apiVersion: "networking.k8s.io/v1",
    kind: "Ingress",
    metadata: { name: "web", namespace: "apps", annotations: { "cert-manager.io/cluster-issuer": "lets-encrypt" } },
    spec: {
        ingressClassName: "nginx",
        tls: [{ hosts: ["web.example.com"], secretName: "web-example-com-tls" }],
        rules: [{ host: "web.example.com", http: { paths: [{ path: "/", pathType: "Prefix", backend: { service: { name: "web", port: { number: 80 } } } }] } }],
    },
});

test("TLS with a secret for every host and a cluster issuer of section 2.11 passes", () => {
    assert.deepEqual(messagesOf(rule, [ingress()]), []);
    const selfSigned = ingress();
    selfSigned.metadata!.annotations!["cert-manager.io/cluster-issuer"] = "self-signed-ca-issuer";
    assert.deepEqual(messagesOf(rule, [selfSigned]), []);
});

test("a missing or unknown issuer annotation fails", () => {
    const unknown = ingress();
    unknown.metadata!.annotations!["cert-manager.io/cluster-issuer"] = "vault";
    assert.match(messagesOf(rule, [unknown])[0], /names cluster issuer "vault"/);
    delete unknown.metadata!.annotations!["cert-manager.io/cluster-issuer"];
    assert.match(messagesOf(rule, [unknown])[0], /no cert-manager.io\/cluster-issuer/);
});

test("no TLS, a TLS entry without secret, or a host outside TLS fails", () => {
    const noTls = ingress();
    delete noTls.spec.tls;
    assert.match(messagesOf(rule, [noTls])[0], /no spec.tls/);
    const noSecret = ingress();
    delete noSecret.spec.tls[0].secretName;
    assert.ok(messagesOf(rule, [noSecret]).some((m) => /without a secretName/.test(m)));
    const extraHost = ingress();
    extraHost.spec.rules.push({ host: "api.example.com" });
    assert.match(messagesOf(rule, [extraHost])[0], /host api.example.com without a TLS entry/);
});
