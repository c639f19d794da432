import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf } from "../pack/testing";
import { rule } from "./stateful-guaranteed-qos";

function database(): K8sObject {
    const sts = deployment("postgres");
    sts.kind = "StatefulSet";
    sts.spec.template.spec.containers[0].resources = { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "0.5", memory: "1024Mi" } };
    return sts;
}

test("requests equal to limits (as quantities) pass in prod; so do limits alone (requests default to them)", () => {
    assert.deepEqual(messagesOf(rule, [database()], { tier: "prod" }), []);
    const limitsOnly = database();
    delete limitsOnly.spec.template.spec.containers[0].resources.requests;
    assert.deepEqual(messagesOf(rule, [limitsOnly], { tier: "prod" }), []);
});

test("Burstable containers of a StatefulSet fail in prod (init containers count for QoS), pass in dev", () => {
    const sts = database();
    sts.spec.template.spec.containers[0].resources.limits.memory = "2Gi";
    assert.match(messagesOf(rule, [sts], { tier: "prod" })[0], /requests memory 1Gi but is limited to 2Gi/);
    assert.deepEqual(messagesOf(rule, [sts], { tier: "dev" }), []);
    const init = database();
    init.spec.template.spec.initContainers = [{ name: "init", image: "x", resources: { requests: { cpu: "100m", memory: "64Mi" } } }];
    assert.equal(messagesOf(rule, [init], { tier: "prod" }).length, 2);
});

test("Deployments are not concerned", () => {
    assert.deepEqual(messagesOf(rule, [deployment("web")], { tier: "prod" }), []);
});
