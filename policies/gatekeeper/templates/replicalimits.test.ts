import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./replicalimits";

const PARAMS = { ranges: [{ min_replicas: 2, max_replicas: 5 }, { min_replicas: 10, max_replicas: 10 }] };

function validDeployment(): K8sObject {
    return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3, template: {} } };
}

test("replicas inside any range pass", () => {
    assert.deepEqual(checkTemplate(rule, validDeployment(), PARAMS), []);
    const ten = validDeployment();
    ten.spec.replicas = 10;
    assert.deepEqual(checkTemplate(rule, ten, PARAMS), []);
});

// Absence and null, as the library's Rego: `provided := spec.replicas` must lie in a range, so an
// object with a spec but without replicas (or with replicas: null) is not allowed; no ranges
// allows nothing; an object without spec is not reviewed.
test("spec.replicas absent or null is refused; no spec is not checked; no ranges refuses every count", () => {
    const message = 'The provided number of replicas is not allowed for Deployment: web. Allowed ranges: {"ranges": [{"max_replicas": 5, "min_replicas": 2}, {"max_replicas": 10, "min_replicas": 10}]}';
    const unset = validDeployment();
    delete unset.spec.replicas;
    assert.deepEqual(checkTemplate(rule, unset, PARAMS), [message]);
    const nul = validDeployment();
    nul.spec.replicas = null;
    assert.deepEqual(checkTemplate(rule, nul, PARAMS), [message]);
    const noSpec = validDeployment();
    delete noSpec.spec;
    assert.deepEqual(checkTemplate(rule, noSpec, PARAMS), []);
    assert.deepEqual(checkTemplate(rule, validDeployment(), {}), ["The provided number of replicas is not allowed for Deployment: web. Allowed ranges: {}"]);
    const unnamed = validDeployment();
    delete unnamed.metadata!.name;
    unnamed.spec.replicas = 7;
    assert.deepEqual(checkTemplate(rule, unnamed, PARAMS), [], "no metadata.name: the message, and so the violation, is undefined");
});

test("replicas outside every range are refused", () => {
    const deployment = validDeployment();
    deployment.spec.replicas = 7;
    assert.deepEqual(checkTemplate(rule, deployment, PARAMS), [
        'The provided number of replicas is not allowed for Deployment: web. Allowed ranges: {"ranges": [{"max_replicas": 5, "min_replicas": 2}, {"max_replicas": 10, "min_replicas": 10}]}',
    ]);
});
