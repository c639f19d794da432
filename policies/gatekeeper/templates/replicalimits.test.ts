import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./replicalimits";

const PARAMS = { ranges: [{ min_replicas: 2, max_replicas: 5 }, { min_replicas: 10, max_replicas: 10 }] };

function validDeployment(): K8sObject {
    return { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { replicas: 3, template: {} } };
}

test("replicas inside any range pass; objects without spec.replicas are not checked", () => {
    assert.deepEqual(checkTemplate(rule, validDeployment(), PARAMS), []);
    const ten = validDeployment();
    ten.spec.replicas = 10;
    assert.deepEqual(checkTemplate(rule, ten, PARAMS), []);
    const unset = validDeployment();
    delete unset.spec.replicas;
    assert.deepEqual(checkTemplate(rule, unset, PARAMS), []);
});

test("replicas outside every range are refused", () => {
    const deployment = validDeployment();
    deployment.spec.replicas = 7;
    assert.deepEqual(checkTemplate(rule, deployment, PARAMS), [
        'The provided number of replicas is not allowed for Deployment: web. Allowed ranges: {"ranges": [{"max_replicas": 5, "min_replicas": 2}, {"max_replicas": 10, "min_replicas": 10}]}',
    ]);
});
