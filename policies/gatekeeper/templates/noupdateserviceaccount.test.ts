import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject, Review } from "../types";
import { type Params, rule } from "./noupdateserviceaccount";

function deployment(serviceAccountName?: string): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name: "web", namespace: "shop" },
        spec: { template: { spec: { serviceAccountName, containers: [{ name: "app", image: "nginx" }] } } },
    };
}

function update(oldObject: K8sObject, object: K8sObject, parameters: Params = {}, userInfo?: Review["userInfo"]): string[] {
    const review: Review = {
        object,
        oldObject,
        kind: { group: "apps", version: "v1", kind: "Deployment" },
        operation: "UPDATE",
        userInfo,
    };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("creating a workload is never refused (a preview only creates)", () => {
    assert.deepEqual(checkTemplate(rule, deployment("sa-1")), []);
});

test("an update that keeps the service account passes", () => {
    assert.deepEqual(update(deployment("sa-1"), deployment("sa-1")), []);
});

test("an update that changes the service account is refused", () => {
    assert.deepEqual(update(deployment("sa-1"), deployment("sa-2"), {}, { username: "bob", groups: ["dev"] }), [
        "user does not have permission to modify serviceAccountName",
    ]);
});

test("allowed users and groups may change it", () => {
    assert.deepEqual(update(deployment("sa-1"), deployment("sa-2"), { allowedUsers: ["bob"] }, { username: "bob" }), []);
    assert.deepEqual(update(deployment("sa-1"), deployment("sa-2"), { allowedGroups: ["ops"] }, { username: "x", groups: ["ops"] }), []);
});

test("an update without a service account on either side is refused", () => {
    assert.deepEqual(update(deployment(), deployment("sa-1")), ["missing serviceAccountName field in oldObject under review"]);
});
