import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./uniqueingresshost";

function ingress(name: string, hosts: string[], namespace = "shop", apiVersion = "networking.k8s.io/v1"): K8sObject {
    return { apiVersion, kind: "Ingress", metadata: { name, namespace }, spec: { rules: hosts.map((host) => ({ host })) } };
}

test("hosts no other Ingress uses pass (the Ingress itself does not conflict)", () => {
    assert.deepEqual(checkTemplate(rule, ingress("web", ["shop.example.com"]), {}, [ingress("api", ["api.example.com"])]), []);
});

test("a host already used by another Ingress, in any namespace, is refused", () => {
    const others = [ingress("old", ["shop.example.com"], "legacy"), ingress("v1beta1", ["www.example.com"], "shop", "extensions/v1beta1")];
    assert.deepEqual(checkTemplate(rule, ingress("web", ["shop.example.com", "www.example.com"]), {}, others), [
        "ingress host conflicts with an existing ingress <shop.example.com>",
        "ingress host conflicts with an existing ingress <www.example.com>",
    ]);
});

test("a null host is a value the Rego compares: it conflicts with another Ingress's null host only (issue 21)", () => {
    // gator: "ingress host conflicts with an existing ingress <null>" when both hold a null host.
    const withNull = (name: string, host: string | null, namespace = "shop"): K8sObject => ({
        apiVersion: "networking.k8s.io/v1",
        kind: "Ingress",
        metadata: { name, namespace },
        spec: { rules: [{ host }, { host: `${name}.example.com` }] },
    });
    assert.deepEqual(checkTemplate(rule, withNull("web", null), {}, [withNull("api", null)]), ["ingress host conflicts with an existing ingress <null>"]);
    assert.deepEqual(checkTemplate(rule, withNull("web", null), {}, [withNull("api", "shop.example.com")]), []);
    assert.deepEqual(checkTemplate(rule, withNull("web", "null"), {}, [withNull("api", null)]), []);
    // A rule without a host is no host at all.
    const hostless: K8sObject = { apiVersion: "networking.k8s.io/v1", kind: "Ingress", metadata: { name: "web", namespace: "shop" }, spec: { rules: [{}] } };
    assert.deepEqual(checkTemplate(rule, hostless, {}, [{ ...hostless, metadata: { name: "api", namespace: "shop" } }]), []);
});
