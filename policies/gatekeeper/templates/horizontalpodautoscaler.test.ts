import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./horizontalpodautoscaler";

const PARAMS = { minimumReplicaSpread: 2, enforceScaleTargetRef: true, ranges: [{ min_replicas: 2, max_replicas: 10 }] };
const deployment: K8sObject = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "shop" }, spec: {} };

function validHpa(): K8sObject {
    return {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "web", namespace: "shop" },
        spec: { minReplicas: 2, maxReplicas: 6, scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" } },
    };
}

test("replicas within a range, a wide enough spread and an existing target pass", () => {
    assert.deepEqual(checkTemplate(rule, validHpa(), PARAMS, [deployment]), []);
});

test("replicas outside every range are refused", () => {
    const hpa = validHpa();
    hpa.spec.maxReplicas = 12;
    assert.deepEqual(checkTemplate(rule, hpa, PARAMS, [deployment]), [
        'The HorizontalPodAutoscaler <web> minReplicas 2 or maxReplicas 12 is not allowed. Allowed ranges: [{"max_replicas": 10, "min_replicas": 2}]',
    ]);
});

test("a spread below minimumReplicaSpread is refused", () => {
    const hpa = validHpa();
    hpa.spec.maxReplicas = 3;
    assert.deepEqual(checkTemplate(rule, hpa, PARAMS, [deployment]), [
        "The HorizontalPodAutoscaler <web> is configured with minReplicas 2 and maxReplicas 3 which is a spread of 1 replica(s). The spread must be at least 2 replica(s)",
    ]);
});

test("a scale target missing from the stack (or in another namespace) is refused", () => {
    const elsewhere = { ...deployment, metadata: { name: "web", namespace: "other" } };
    assert.deepEqual(checkTemplate(rule, validHpa(), PARAMS, [elsewhere]), [
        "The HorizontalPodAutoscaler <web> has a scaleTargetRef of <Deployment/web> but it does not exist. The scaleTargetRef for the HorizontalPodAutoscaler must exist",
    ]);
    assert.deepEqual(checkTemplate(rule, validHpa(), { ...PARAMS, enforceScaleTargetRef: false }, []), []);
});
