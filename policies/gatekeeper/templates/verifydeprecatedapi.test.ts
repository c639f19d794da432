import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./verifydeprecatedapi";

const PARAMS = {
    k8sVersion: 1.25,
    kvs: [
        { deprecatedAPI: "batch/v1beta1", kinds: ["CronJob"], targetAPI: "batch/v1" },
        { deprecatedAPI: "policy/v1beta1", kinds: ["PodSecurityPolicy"], targetAPI: "None" },
    ],
};

const object = (apiVersion: string, kind: string): K8sObject => ({ apiVersion, kind, metadata: { name: "x" }, spec: {} });

test("current API versions pass", () => {
    assert.deepEqual(checkTemplate(rule, object("batch/v1", "CronJob"), PARAMS), []);
});

test("a deprecated API version is refused with its replacement", () => {
    assert.deepEqual(checkTemplate(rule, object("batch/v1beta1", "CronJob"), PARAMS), [
        "API CronJob for batch/v1beta1 is deprecated in Kubernetes version 1.25, please use batch/v1 instead",
    ]);
});

test('a removed API (targetAPI "None") points to the deprecation guide', () => {
    assert.deepEqual(checkTemplate(rule, object("policy/v1beta1", "PodSecurityPolicy"), PARAMS), [
        "API PodSecurityPolicy for policy/v1beta1 is deprecated in Kubernetes version 1.25, please see Kubernetes API deprecation guide",
    ]);
});

test("without k8sVersion, or an entry without targetAPI, there is no violation (get_message is undefined), as gator reports (issue 21)", () => {
    assert.deepEqual(checkTemplate(rule, object("batch/v1beta1", "CronJob"), { kvs: PARAMS.kvs }), []);
    assert.deepEqual(checkTemplate(rule, object("batch/v1beta1", "CronJob"), { k8sVersion: 1.25, kvs: [{ deprecatedAPI: "batch/v1beta1", kinds: ["CronJob"] }] }), []);
});
