/**
 * The add-on pods explain counts (cli/explain/addonPods.ts) are the pods the real charts render
 * (issue 28): with OPS_CHART_SOURCES (a folder of <chart>-<version>/ chart sources, docs/e2e.md
 * "Real charts") and OPS_HELM (a helm binary), `helm template` of each pinned add-on chart with the
 * values the program emits for every stack, plus the StatefulSets the Prometheus operator makes from
 * its custom resources (tools/admission/operatorPods.ts), must give the same workloads (kind,
 * namespace/name, replicas) with the same containers and requests as the model. helm template is
 * slow: without the variables the test is skipped, saying so (npm test stays fast).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import type { K8sObject } from "../policies/gatekeeper/types";
import { addonModel } from "../cli/explain/addonPods";
import { podRequest } from "../cli/explain/capacity";
import { bytes, millis } from "../cli/explain/quantity";
import { podTemplateOf } from "../cli/explain/workloads";
import { listStacks } from "../cli/harness/stackConfig";
import { renderChart } from "../tools/admission/charts";
import { operatorStatefulSets } from "../tools/admission/operatorPods";
import { offlineStackConfig } from "../tools/genGitops";
import { releasesOf } from "./addonReleases";

const HELM = process.env.OPS_HELM;
const SOURCES = process.env.OPS_CHART_SOURCES;
const skip = !HELM || !SOURCES ? "set OPS_CHART_SOURCES (a folder with <chart>-<version>/ chart sources) and OPS_HELM (a helm binary) to compare explain's add-on pods with helm template of the real charts" : false;

const POD_RUNNING = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"]);

/** What capacity reads of a pod-running object: kind, name, replicas, each container's requests, the pod's request. */
function shape(o: K8sObject) {
    const t = podTemplateOf(o) ?? {};
    const spec = t.spec ?? {};
    const c = (x: any, init: boolean) => ({
        name: x.name, init,
        cpu: millis(x.resources?.requests?.cpu) ?? null, memory: bytes(x.resources?.requests?.memory) ?? null, ephemeralStorage: bytes(x.resources?.requests?.["ephemeral-storage"]) ?? null,
        cpuLimit: millis(x.resources?.limits?.cpu) ?? null, memoryLimit: bytes(x.resources?.limits?.memory) ?? null,
    });
    const spec_ = o.spec as any;
    const replicas = o.kind === "Job" ? spec_?.parallelism ?? 1 : o.kind === "DaemonSet" ? 1 : spec_?.replicas ?? 1;
    return {
        workload: `${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`,
        replicas: Number(replicas),
        containers: [...(spec.initContainers ?? []).map((x: any) => c(x, true)), ...(spec.containers ?? []).map((x: any) => c(x, false))].sort((a, b) => (a.name < b.name ? -1 : 1)),
        request: podRequest(spec),
    };
}
const sorted = <T extends { workload: string }>(xs: T[]) => [...xs].sort((a, b) => (a.workload < b.workload ? -1 : 1));

/**
 * The values with a distinct size in each container `resources` the program sets (not a claim's
 * storage request): the program gives most containers of a chart the same sizes, so only distinct
 * ones show that the model reads each container's own values path.
 */
function distinctResources(values: unknown): unknown {
    let n = 0;
    const walk = (v: any): any => {
        if (Array.isArray(v)) return v.map(walk);
        if (!v || typeof v !== "object") return v;
        return Object.fromEntries(Object.entries(v).map(([k, x]: [string, any]) => {
            if (k === "resources" && x && typeof x === "object" && !x.requests?.storage) {
                n++;
                return [k, { requests: { cpu: `${n}m`, memory: `${n}Mi` }, limits: { cpu: `${100 + n}m`, memory: `${100 + n}Mi` } }];
            }
            return [k, walk(x)];
        }));
    };
    return walk(values);
}

test("explain's add-on pods are what helm template of each pinned chart renders with the emitted values (every stack)", { skip }, () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        const releases = releasesOf(cfg);
        // ci once more with a distinct size in every resources value.
        if (stack === "ci") releases.push(...releasesOf(cfg).map((r) => ({ ...r, values: distinctResources(r.values) })));
        for (const release of releases) {
            const dir = path.join(SOURCES!, `${release.chart}-${release.version}`);
            assert.ok(fs.existsSync(path.join(dir, "Chart.yaml")), `${dir}/Chart.yaml`);
            const rendered = renderChart(HELM!, dir, { releaseName: release.release, namespace: release.namespace, values: release.values });
            const real = sorted([...rendered, ...operatorStatefulSets(rendered)].filter((o) => POD_RUNNING.has(String(o.kind))).map(shape));
            const model = addonModel([release]);
            assert.deepEqual(model.notes, [], `${stack} ${release.chart}`);
            assert.ok(real.length > 0, `${stack} ${release.chart}: helm rendered no pods`);
            assert.deepEqual(sorted(model.objects.map(shape)), real, `${stack} ${release.chart} ${release.version}`);
        }
    }
});
