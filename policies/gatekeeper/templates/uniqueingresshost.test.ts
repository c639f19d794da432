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
