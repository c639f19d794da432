import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf, service } from "../pack/testing";
import { rule } from "./service-selects-pods";

const stack = (): K8sObject[] => [deployment("web"), service("web")];

test("a Service selecting a workload's pods by a declared port name passes", () => {
    assert.deepEqual(messagesOf(rule, stack()), []);
});

test("a selector matching no pod fails; so does the same selector in another namespace", () => {
    const [app, svc] = stack();
    svc.spec.selector["app.kubernetes.io/component"] = "worker";
    assert.match(messagesOf(rule, [app, svc])[0], /matches no pod/);
    const [app2, svc2] = stack();
    app2.metadata!.namespace = "other";
    assert.match(messagesOf(rule, [app2, svc2])[0], /matches no pod/);
});

test("a named targetPort no selected container declares fails; numeric ports are not checked", () => {
    const [app, svc] = stack();
    svc.spec.ports[0].targetPort = "metrics";
    assert.match(messagesOf(rule, [app, svc])[0], /targets port name metrics/);
    svc.spec.ports[0].targetPort = 9090;
    assert.deepEqual(messagesOf(rule, [app, svc]), []);
});

test("Services without a selector (manual endpoints, ExternalName) are not checked", () => {
    const [, svc] = stack();
    delete svc.spec.selector;
    assert.deepEqual(messagesOf(rule, [svc]), []);
});
