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

// The message as the library's sprintf renders it: its format has six %v for five values (the
// ranges land after "not allowed:", Go's fmt marks the sixth %!v(MISSING)).
test("replicas outside every range are refused, with the library's message text", () => {
    const hpa = validHpa();
    hpa.spec.maxReplicas = 12;
    assert.deepEqual(checkTemplate(rule, hpa, PARAMS, [deployment]), [
        'The HorizontalPodAutoscaler <web> minReplicas 2 or maxReplicas 12 is not allowed: [{"max_replicas": 10, "min_replicas": 2}]. Allowed ranges: %!v(MISSING)',
    ]);
});

// Absence and null, as the Rego: an empty ranges list allows nothing; a null bound is a value
// outside every range; an absent bound or absent ranges leave the message (and the violation) undefined.
test("ranges [] refuses, a null bound is refused, an absent bound or absent ranges report nothing", () => {
    const only = (p: Record<string, unknown>) => ({ ...p, enforceScaleTargetRef: false });
    assert.equal(checkTemplate(rule, validHpa(), only({ ranges: [] }), [deployment]).length, 1);
    const nul = validHpa();
    nul.spec.minReplicas = null;
    assert.deepEqual(checkTemplate(rule, nul, only({ ranges: PARAMS.ranges }), [deployment]), [
        'The HorizontalPodAutoscaler <web> minReplicas null or maxReplicas 6 is not allowed: [{"max_replicas": 10, "min_replicas": 2}]. Allowed ranges: %!v(MISSING)',
    ]);
    const absent = validHpa();
    delete absent.spec.minReplicas;
    assert.deepEqual(checkTemplate(rule, absent, only(PARAMS), [deployment]), []);
    const big = validHpa();
    big.spec.maxReplicas = 12;
    assert.deepEqual(checkTemplate(rule, big, only({ minimumReplicaSpread: 2 }), [deployment]), []);
});

test("a scaleTargetRef without kind or name cannot be named in the message, so it is not reported", () => {
    const hpa = validHpa();
    delete hpa.spec.scaleTargetRef.kind;
    assert.deepEqual(checkTemplate(rule, hpa, { enforceScaleTargetRef: true }, []), []);
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
