import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./hpa-scale-down-stabilization";

const hpa = (): K8sObject => ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web", namespace: "apps" },
    spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: 2, maxReplicas: 6, behavior: { scaleDown: { stabilizationWindowSeconds: 300 } } },
});

test("a 300 s window passes in prod (section 8.1: 5m0s downscale stabilization); so does the Kubernetes default", () => {
    assert.deepEqual(messagesOf(rule, [hpa()], { tier: "prod" }), []);
    const noBehavior = hpa();
    delete noBehavior.spec.behavior;
    assert.deepEqual(messagesOf(rule, [noBehavior], { tier: "prod" }), []);
});

test("a shorter window fails in prod (the default tier) and is allowed in dev", () => {
    const short = hpa();
    short.spec.behavior.scaleDown.stabilizationWindowSeconds = 60;
    assert.match(messagesOf(rule, [short])[0], /60 s; prod needs at least 300 s/);
    assert.deepEqual(messagesOf(rule, [short], { tier: "dev" }), []);
});

test("the minimum is a setting", () => {
    assert.equal(messagesOf(rule, [hpa()], { tier: "prod", minimumSeconds: 600 }).length, 1);
});
