import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf, service } from "../pack/testing";
import { rule } from "./statefulset-headless-service";

function stack(): { sts: K8sObject; svc: K8sObject } {
    const sts = deployment("db");
    sts.kind = "StatefulSet";
    sts.spec.serviceName = "db-headless";
    const svc = service("db");
    svc.metadata!.name = "db-headless";
    svc.spec.clusterIP = "None";
    return { sts, svc };
}

test("a StatefulSet naming a headless Service that selects its pods passes", () => {
    const { sts, svc } = stack();
    assert.deepEqual(messagesOf(rule, [sts, svc]), []);
});

test("a Service with a virtual IP fails", () => {
    const { sts, svc } = stack();
    delete svc.spec.clusterIP;
    assert.match(messagesOf(rule, [sts, svc])[0], /not headless/);
});

test("a missing serviceName, a Service not in the stack or in another namespace fails", () => {
    const { sts, svc } = stack();
    assert.match(messagesOf(rule, [sts])[0], /does not create/);
    svc.metadata!.namespace = "elsewhere";
    assert.match(messagesOf(rule, [sts, svc])[0], /does not create/);
    delete sts.spec.serviceName;
    assert.match(messagesOf(rule, [sts])[0], /no spec.serviceName/);
});

test("a headless Service that selects other pods fails", () => {
    const { sts, svc } = stack();
    svc.spec.selector = { "app.kubernetes.io/name": "other" };
    assert.match(messagesOf(rule, [sts, svc])[0], /does not select its pods/);
});
