import assert from "node:assert/strict";
import * as path from "node:path";
import { test } from "node:test";
import { childApps } from "../../components/platform/gitopsChildren";
import { offlineStackConfig } from "../genGitops";
import { childApplications, syncOrder } from "./steps/children";

const REPO = path.resolve(__dirname, "../..");

test("the children step reads each stack's committed Applications: the pinned chart, release, namespace of the program's configuration", () => {
    for (const stack of ["ci", "dev", "prod"]) {
        const apps = childApplications(REPO, stack);
        const want = childApps(offlineStackConfig(stack)).map((a) => `${a.chart} ${a.version} ${a.releaseName} ${a.namespace}`).sort();
        assert.deepEqual(apps.map((a) => `${a.chart} ${a.version} ${a.releaseName} ${a.namespace}`).sort(), want, stack);
        for (const a of apps) assert.ok(a.values.length > 0, `${stack} ${a.name}: values`);
    }
});

test("objects are applied in Argo CD's order: sync wave first, then kind (namespace, config, claims, RBAC, services, workloads, ingress)", () => {
    const o = (kind: string, name: string, wave?: string) => ({ apiVersion: "v1", kind, metadata: { name, ...(wave ? { annotations: { "argocd.argoproj.io/sync-wave": wave } } : {}) } });
    const order = syncOrder([o("Ingress", "i"), o("Deployment", "d"), o("Service", "s"), o("PersistentVolumeClaim", "c"), o("Secret", "late", "1"), o("ServiceAccount", "a"), o("Widget", "w")]);
    assert.deepEqual(order.map((x) => x.metadata?.name), ["a", "c", "s", "d", "i", "w", "late"]);
});

test("RespectIgnoreDifferences: the live selector is kept for the object the rule names, nothing else changes", async () => {
    const { respectIgnoreDifferences } = await import("./steps/children");
    const desired = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "uptime-kuma", namespace: "uptime" }, spec: { replicas: 1, selector: { matchLabels: { a: "1", b: "2" } }, template: { metadata: { labels: { a: "1", b: "2" } } } } };
    const live = { ...desired, spec: { ...desired.spec, replicas: 3, selector: { matchLabels: { a: "1" } } } };
    const rule = [{ group: "apps", kind: "Deployment", name: "uptime-kuma", jsonPointers: ["/spec/selector"] }];
    const out = respectIgnoreDifferences(desired, live, rule);
    assert.deepEqual(out.spec.selector, { matchLabels: { a: "1" } });
    assert.equal(out.spec.replicas, 1);
    assert.deepEqual(out.spec.template, desired.spec.template);
    assert.deepEqual(respectIgnoreDifferences(desired, undefined, rule), desired, "a fresh cluster gets the chart's selector");
    assert.deepEqual(respectIgnoreDifferences({ ...desired, metadata: { name: "other", namespace: "uptime" } }, live, rule).spec.selector, desired.spec.selector);
});
