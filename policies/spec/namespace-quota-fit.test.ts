import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./namespace-quota-fit";

const container = (cpu: string, memory: string) => ({ name: "c", resources: { requests: { cpu, memory }, limits: { cpu, memory } } });

/** 2 replicas of 500m / 512Mi, autoscaled to 3, plus one surge pod: 4 pods, 2 CPU, 2Gi. */
function stack(): K8sObject[] {
    return [
        { apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "namespace-quota", namespace: "apps" }, spec: { hard: { "requests.cpu": "2", "limits.cpu": "2", "requests.memory": "2Gi", "limits.memory": "2Gi", pods: "4" } } },
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "apps" }, spec: { replicas: 2, template: { spec: { containers: [container("500m", "512Mi")] } } } },
        { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "web", namespace: "apps" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: 2, maxReplicas: 3 } },
    ];
}

test("workloads that fit their namespace's quota at the autoscaler maximum plus a surge pod pass", () => {
    assert.deepEqual(messagesOf(rule, stack()), []);
});

test("an autoscaler maximum the quota cannot hold fails, naming the namespace, the resource, the need and the allowance", () => {
    const objects = stack();
    objects[2].spec.maxReplicas = 4;
    const messages = messagesOf(rule, objects);
    assert.ok(messages.some((m) => /namespace apps: the workloads need pods 5, the ResourceQuota allows 4/.test(m)), messages.join("\n"));
    assert.ok(messages.some((m) => /namespace apps: the workloads need requests\.cpu 2500m, the ResourceQuota allows 2000m/.test(m)), messages.join("\n"));
});

test("a Recreate Deployment has no surge pod; an unsuspended CronJob's pod counts, a suspended one does not", () => {
    const objects = stack();
    objects[1].spec.strategy = { type: "Recreate" };
    objects[2].spec.maxReplicas = 4;
    assert.deepEqual(messagesOf(rule, objects), [], "4 pods without surge fit");
    const cron = { apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "backup", namespace: "apps" }, spec: { suspend: true, schedule: "0 3 * * *", jobTemplate: { spec: { template: { spec: { containers: [container("100m", "64Mi")] } } } } } } as K8sObject;
    assert.deepEqual(messagesOf(rule, [...objects, cron]), []);
    cron.spec.suspend = false;
    assert.ok(messagesOf(rule, [...objects, cron]).some((m) => /need pods 5/.test(m)));
});

test("a namespace without a quota is not judged here (namespace-guardrails asks for the guardrails)", () => {
    const [, deployment, hpa] = stack();
    hpa.spec.maxReplicas = 40;
    assert.deepEqual(messagesOf(rule, [deployment, hpa]), []);
});
