/**
 * explain's capacity counts the add-on charts' pods (cli/explain/addonPods.ts, issue 28): the ci
 * stack as it was (the production add-on sizes, two ingress controllers) did not fit its one runner
 * node once the real charts were installed (the e2e's config-change Job stayed Pending, "Insufficient
 * cpu"), and explain said it fit because it counted only the program's own workloads. The pod list
 * per chart is compared with `helm template` of the real charts in test/addonCapacity.test.ts.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { loadConfig, mapSource, StackConfig } from "../config";
import { explain } from "../cli/explain/index";
import { AddonRelease, addonModel, addonReleases } from "../cli/explain/addonPods";
import { readStackValues } from "../cli/harness/stackConfig";
import type { RenderResult } from "../cli/harness/render";
import { releasesOf } from "./addonReleases";
import { renderStack } from "./render";

function stackConfig(stack: string, overrides: Record<string, unknown> = {}): StackConfig {
    const v = readStackValues(stack, overrides);
    const raw = Object.fromEntries(Object.entries(v.config).filter(([k]) => k.startsWith(`${v.project}:`)).map(([k, x]) => [k.slice(v.project.length + 1), x]));
    return loadConfig(mapSource(v.project, stack, raw));
}

/**
 * ci's add-on keys as they were before it declared its own (Pulumi.ci.yaml at e0541a0): the
 * schema defaults of config/areas/platform.ts, Prometheus's 100m of the old stack file.
 */
const OLD_CI_ADDONS = {
    addonsIngressNginxReplicas: 2,
    addonsMetricsServerContainerRequestsCpu: "100m",
    addonsVpaContainerRequestsCpu: "50m",
    addonsArgoCdContainerRequestsCpu: "50m",
    addonsArgoCdControllerCpu: "500m",
    addonsArgoCdControllerMemory: "1Gi",
    addonsMonitoringContainerRequestsCpu: "50m",
    addonsMonitoringRequestsCpu: "100m",
    addonsMonitoringAlertmanagerCpu: "100m",
    addonsMonitoringConfigReloaderCpu: "50m",
};

describe("explain counts the add-on charts' pods", () => {
    let ci: RenderResult;
    before(async () => {
        ci = await renderStack("ci");
        assert.deepEqual(ci.errors, []);
    });
    const explainCi = (releases?: AddonRelease[]) => explain({ stack: "ci", objects: ci.redactedObjects, files: ci.files, releases }).capacity;

    it("reads each Release of the render with the chart, version and values the program gives it", () => {
        const byRelease = (rs: AddonRelease[]) => [...rs].sort((a, b) => (a.release < b.release ? -1 : 1));
        assert.deepEqual(byRelease(addonReleases(ci.resources)), byRelease(releasesOf(stackConfig("ci"))));
    });

    it("ci: one node of 4 CPU / 16Gi (the runner), every chart's pods counted, and it fits", () => {
        const c = explainCi(addonReleases(ci.resources));
        assert.deepEqual(c.nodes, { count: 1, cpu: "4", memory: "16Gi" });
        assert.equal(c.allocatablePerNode.cpu, "3", "4 CPU less the default 500m + 500m reservations");
        assert.deepEqual(c.addons.map((a) => a.chart).sort(), ["argo-cd", "cert-manager", "ingress-nginx", "kube-prometheus-stack", "metrics-server", "reloader", "vpa"]);
        for (const a of c.addons) assert.ok(a.pods > 0, a.chart);
        assert.ok(c.demand.addons.pods >= 28, `${c.demand.addons.pods} add-on pods`);
        assert.equal(c.demand.total.cpu, c.demand.steady.cpu + c.demand.rolloutSurge.cpu + c.demand.cronJobs.cpu + c.demand.addons.cpu);
        assert.equal(c.fits, true, c.unschedulable.join("; "));
    });

    it("the old ci (production add-on sizes, two ingress controllers) does not fit, though its own workloads alone do", () => {
        const old = stackConfig("ci", OLD_CI_ADDONS);
        assert.equal(old.addons.argoCd.controllerCpu, "500m");
        assert.equal(explainCi([]).fits, true, "the program's workloads alone fit: what explain said before it counted the add-ons");
        const c = explainCi(releasesOf(old));
        assert.equal(c.fits, false);
        assert.ok(c.unschedulable.length > 0);
        const argo = c.addons.find((a) => a.chart === "argo-cd")!;
        assert.ok(argo.workloads.some((w) => w.workload === "argocd/argo-cd-argocd-application-controller" && w.cpuPerPod === "500m"), JSON.stringify(argo.workloads));
    });

    it("a chart it has no model for, or another version, is said in the notes, never counted silently", () => {
        const m = addonModel([
            { release: "x", namespace: "x", chart: "unknown-chart", version: "1.0.0", values: {} },
            { release: "reloader", namespace: "reloader", chart: "reloader", version: "1.1.1", values: {} },
        ]);
        assert.match(m.notes.join("\n"), /unknown-chart 1\.0\.0 .*no pod model/);
        assert.match(m.notes.join("\n"), /reloader 1\.1\.1: .*as chart 1\.2\.0 renders them/);
        assert.deepEqual(m.charts.map((c) => c.chart), ["reloader"]);
        const r = explain({ stack: "ci", objects: ci.redactedObjects, files: ci.files });
        assert.ok(r.notes.some((n) => /no helm Releases given/.test(n)));
    });
});
