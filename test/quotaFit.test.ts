/**
 * A namespace quota that its workloads do not fit fails the render, naming the namespace, the
 * resource, what is needed and what is allowed (it used to be caught only by a test).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { quotaProblems } from "../policies/spec/quotaFit";
import { renderStack } from "./render";

const container = (cpu: string, memory: string) => ({ name: "c", resources: { requests: { cpu, memory }, limits: { cpu, memory } } });
const quota = (ns: string, hard: Record<string, string>) => ({ apiVersion: "v1", kind: "ResourceQuota", metadata: { name: "namespace-quota", namespace: ns }, spec: { hard } });

test("workloads at their autoscaler maximum plus a surge pod are compared with the quota", () => {
    const objects = [
        quota("apps", { "requests.cpu": "2", "limits.cpu": "2", "requests.memory": "4Gi", "limits.memory": "4Gi", pods: "4", "requests.storage": "10Gi" }),
        { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web", namespace: "apps" }, spec: { replicas: 1, template: { spec: { containers: [container("500m", "1Gi")] } } } },
        { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "web", namespace: "apps" }, spec: { scaleTargetRef: { name: "web" }, maxReplicas: 3 } },
    ];
    assert.deepEqual(quotaProblems(objects), [], "3 replicas + 1 surge = 4 pods of 500m/1Gi fit 2 CPUs, 4Gi, 4 pods");
    objects.push({ apiVersion: "v1", kind: "PersistentVolumeClaim", metadata: { name: "data", namespace: "apps" }, spec: { resources: { requests: { storage: "20Gi" } } } } as any);
    (objects[2] as any).spec.maxReplicas = 4;
    const problems = quotaProblems(objects);
    assert.ok(problems.includes('quota: namespace apps: the workloads need pods 5, the ResourceQuota allows 4; raise it with guardrailsQuotaOverrides (e.g. "apps:pods=...") or shrink the workloads'), problems.join("\n"));
    assert.ok(problems.some((p) => /namespace apps: the workloads need requests.cpu 2500m, the ResourceQuota allows 2000m/.test(p)));
    assert.ok(problems.some((p) => /namespace apps: the workloads need requests.storage 20480Mi, the ResourceQuota allows 10240Mi/.test(p)));
});

test("a quota override below what the namespace's workloads need fails the render", async () => {
    const r = await renderStack("dev", { guardrailsQuotaOverrides: JSON.stringify(["data:limits.memory=1Gi"]) });
    assert.match(r.errors.join("\n"), /quota: namespace data: the workloads need limits\.memory \d+Mi, the ResourceQuota allows 1024Mi/);
});
