import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./hpa-replica-range";

const hpa = (spec: Record<string, unknown>): K8sObject => ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web", namespace: "apps" },
    spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, minReplicas: 2, maxReplicas: 6, ...spec },
});

test("minReplicas at most maxReplicas passes, equal included; minReplicas defaults to 1", () => {
    assert.deepEqual(messagesOf(rule, [hpa({})]), []);
    assert.deepEqual(messagesOf(rule, [hpa({ minReplicas: 6 })]), []);
    assert.deepEqual(messagesOf(rule, [hpa({ minReplicas: undefined, maxReplicas: 1 })]), []);
});

test("minReplicas above maxReplicas fails", () => {
    assert.match(messagesOf(rule, [hpa({ minReplicas: 7 })])[0], /minReplicas 7 and maxReplicas 6/);
});

test("minReplicas 0 or a missing maxReplicas fails", () => {
    assert.equal(messagesOf(rule, [hpa({ minReplicas: 0 })]).length, 1);
    assert.equal(messagesOf(rule, [hpa({ maxReplicas: undefined })]).length, 1);
});
