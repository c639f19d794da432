import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./poddisruptionbudget";

function pdb(spec: Record<string, unknown>, name = "web-pdb"): K8sObject {
    return { apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name, namespace: "shop" }, spec: { selector: { matchLabels: { app: "web" } }, ...spec } };
}

function validDeployment(): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "shop" },
        spec: { replicas: 3, selector: { matchLabels: { app: "web", tier: "front" } }, template: {} },
    };
}

test("a budget with maxUnavailable above 0 passes", () => {
    assert.deepEqual(checkTemplate(rule, pdb({ maxUnavailable: 1 })), []);
});

// As the library's Rego, whose selection rules apply to every reviewed object: a budget is in the
// stack's inventory and its matchLabels select its own selector, so it is also "selected by" itself.
test("a budget with maxUnavailable 0 is refused (and, being in the stack, selects itself)", () => {
    assert.deepEqual(checkTemplate(rule, pdb({ maxUnavailable: 0 })), [
        "PodDisruptionBudget <web-pdb> has maxUnavailable of 0, only positive integers are allowed for maxUnavailable",
        "PodDisruptionBudget <web-pdb> has been selected by PodDisruptionBudget <web-pdb> but has maxUnavailable of 0, only positive integers are allowed for maxUnavailable",
    ]);
});

// Nulls, strings and absence, as the Rego's object.get defaults and ordering: maxUnavailable null
// is invalid, any string (even "0%") counts as above 0; a string minAvailable ("50%") is never below
// a replica count; absent replicas leave the message undefined.
test("maxUnavailable null is refused, string values follow Rego's ordering, absent replicas are not reported", () => {
    assert.equal(checkTemplate(rule, pdb({ maxUnavailable: null })).length, 2);
    assert.deepEqual(checkTemplate(rule, pdb({ maxUnavailable: "0%" })), []);
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}, [pdb({ minAvailable: "50%" })]), [
        "Deployment <web> has 3 replica(s) but PodDisruptionBudget <web-pdb> has minAvailable of 50%, PodDisruptionBudget count should always be lower than replica(s), and not used when replica(s) is set to 1",
    ]);
    const noReplicas = validDeployment();
    delete noReplicas.spec.replicas;
    assert.deepEqual(checkTemplate(rule, noReplicas, {}, [pdb({ minAvailable: 5 })]), []);
    const nullReplicas = validDeployment();
    nullReplicas.spec.replicas = null;
    assert.equal(checkTemplate(rule, nullReplicas, {}, [pdb({ minAvailable: 1 })]).length, 1);
});

test("a workload whose budget leaves room for evictions passes", () => {
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}, [pdb({ minAvailable: 2 })]), []);
});

test("a workload selected by a budget with minAvailable equal to its replicas is refused", () => {
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}, [pdb({ minAvailable: 3 })]), [
        "Deployment <web> has 3 replica(s) but PodDisruptionBudget <web-pdb> has minAvailable of 3, PodDisruptionBudget count should always be lower than replica(s), and not used when replica(s) is set to 1",
    ]);
});

test("a workload selected by a budget with maxUnavailable 0 is refused", () => {
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}, [pdb({ maxUnavailable: 0 })]), [
        "Deployment <web> has been selected by PodDisruptionBudget <web-pdb> but has maxUnavailable of 0, only positive integers are allowed for maxUnavailable",
    ]);
});

test("budgets selecting other labels or in other namespaces are ignored", () => {
    const other = pdb({ minAvailable: 3, selector: { matchLabels: { app: "db" } } });
    const elsewhere = { ...pdb({ minAvailable: 3 }), metadata: { name: "x", namespace: "other" } };
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}, [other, elsewhere]), []);
});
