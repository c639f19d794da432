/**
 * The GitOps children's pods, as their charts build them from the values the program writes, are
 * admitted by both enforcement points (the pack's engine and the generated admission policies) on
 * every stack (issue 19). The model of each chart's pod template is tools/admission/childPods.ts;
 * with OPS_HELM (a helm binary) and OPS_CHART_SOURCES (a folder holding <chart>-<version>/ chart
 * sources) the last test renders the real charts and checks both the model and the verdicts.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { UPTIME_MONITOR_CAPABILITIES } from "../components/platform/gitopsChildren";
import { loadConstraintSet } from "../policies/gatekeeper/engine/constraints";
import { templateRegistry } from "../policies/gatekeeper/templates";
import { childWorkloads } from "../tools/admission/childPods";
import { renderChart } from "../tools/admission/charts";
import { judge, POD_KINDS } from "../tools/admission/judge";
import { offlineStackConfig } from "../tools/genGitops";
import { listStacks, REPO_ROOT } from "../cli/harness/stackConfig";

const tierOf = (stack: string) => offlineStackConfig(stack).environment.tier;

test("every child's pods are admitted on every stack once prod's images carry their recorded digests", () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        for (const { app, objects } of childWorkloads(cfg)) {
            const j = judge(stack, cfg.environment.tier, objects);
            assert.equal(j.podObjects, 1, `${stack} ${app.key}`);
            assert.deepEqual(j.denials, [], `${stack} ${app.key}`);
        }
    }
});

test("prod as committed (no digest recorded here): the children's tag-only images are refused by the digest rules and nothing else", () => {
    const cfg = offlineStackConfig("prod", "tag");
    for (const { app, objects } of childWorkloads(cfg)) {
        const rules = new Set(judge("prod", "prod", objects).denials.map((d) => d.replace(/^[^:]+: /, "").replace(/:.*$/, "")));
        assert.deepEqual([...rules].sort(), ["CrossGuard K8sImageDigests/image-digests", "CrossGuard images-pinned-by-digest", "admission gatekeeper-k8simagedigests-image-digests", "admission spec-images-pinned-by-digest"], app.key);
    }
});

test("the judgement is not vacuous: an extra capability, root outside the uptime namespace, an unlisted repository are refused", () => {
    for (const stack of ["dev", "prod"]) {
        const cfg = offlineStackConfig(stack, "placeholder");
        const [uptime, chat] = childWorkloads(cfg).map((c) => c.objects[0] as any);
        const extraCap = structuredClone(uptime);
        extraCap.spec.template.spec.containers[0].securityContext.capabilities.add.push("NET_ADMIN");
        assert.match(judge(stack, tierOf(stack), [extraCap]).denials.join("\n"), /K8sPSPCapabilities\/uptime-monitor-capabilities/);
        const rootElsewhere = structuredClone(uptime);
        rootElsewhere.metadata.namespace = chat.metadata.namespace;
        const d = judge(stack, tierOf(stack), [rootElsewhere]).denials.join("\n");
        assert.match(d, /K8sPSPCapabilities\/drop-all-capabilities/);
        if (stack === "prod") assert.match(d, /K8sPSPAllowedUsers\/run-as-non-root/);
        const repo = structuredClone(chat);
        repo.spec.template.spec.containers[0].image = repo.spec.template.spec.containers[0].image.replace("ghcr.io/open-webui/", "ghcr.io/elsewhere/");
        assert.match(judge(stack, tierOf(stack), [repo]).denials.join("\n"), /K8sAllowedRepos\/allowed-repos/);
    }
});

test("the uptime monitor's exception names exactly its namespace, its uid and the capabilities its values add", () => {
    for (const tier of ["dev", "prod"]) {
        const set = loadConstraintSet(fs.readFileSync(path.join(REPO_ROOT, "policies", "constraints", `${tier}.yaml`), "utf8"), templateRegistry, `${tier}.yaml`);
        const byName = new Map(set.constraints.map((c) => [c.name, c] as const));
        const u = offlineStackConfig(tier).gitops.uptimeMonitor;
        const caps: any = byName.get("uptime-monitor-capabilities");
        const users: any = byName.get("uptime-monitor-users");
        assert.deepEqual(caps.match.namespaces, [u.namespace]);
        assert.deepEqual(caps.parameters.allowedCapabilities, [...UPTIME_MONITOR_CAPABILITIES]);
        assert.deepEqual(users.match.namespaces, [u.namespace]);
        assert.deepEqual(users.parameters.runAsUser.ranges, [{ min: 0, max: 0 }, { min: u.uid, max: u.uid }]);
        assert.deepEqual((byName.get("run-as-non-root") as any).match.excludedNamespaces, [u.namespace]);
        // drop-all-capabilities also leaves out ingress-nginx, judged by its own scoped constraint (test/addonAdmission.test.ts).
        assert.deepEqual([...(byName.get("drop-all-capabilities") as any).match.excludedNamespaces].sort(), [u.namespace, offlineStackConfig(tier).ingress.controllerNamespace].sort());
    }
});

const HELM = process.env.OPS_HELM;
const SOURCES = process.env.OPS_CHART_SOURCES;
const skipHelm = !HELM || !SOURCES ? "set OPS_HELM (a helm binary) and OPS_CHART_SOURCES (a folder with <chart>-<version>/ chart sources) to render the pinned charts" : false;

test("helm template of each pinned child chart with the emitted values: every pod admitted, and the model matches the chart", { skip: skipHelm }, () => {
    for (const stack of listStacks()) {
        const cfg = offlineStackConfig(stack, "placeholder");
        for (const { app, objects } of childWorkloads(cfg)) {
            const chartDir = path.join(SOURCES!, `${app.chart}-${app.version}`);
            assert.ok(fs.existsSync(path.join(chartDir, "Chart.yaml")), `${chartDir}/Chart.yaml`);
            const rendered = renderChart(HELM!, chartDir, app).filter((o) => POD_KINDS.has(String(o.kind)));
            assert.equal(rendered.length, 1, `${stack} ${app.key}: ${rendered.map((o) => o.kind).join(", ")}`);
            assert.deepEqual(judge(stack, cfg.environment.tier, rendered).denials, [], `${stack} ${app.key}`);
            const [real, model] = [rendered[0] as any, objects[0] as any].map((o) => o.spec.template);
            const pick = (t: any) => ({
                labels: t.metadata.labels,
                securityContext: t.spec.securityContext ?? {},
                containers: [...(t.spec.initContainers ?? []), ...t.spec.containers].map((c: any) => ({ name: c.name, image: c.image, securityContext: c.securityContext, resources: c.resources, probes: [!!c.livenessProbe, !!c.readinessProbe] })),
                volumes: (t.spec.volumes ?? []).map((v: any) => Object.keys(v).filter((k) => k !== "name").join() + ":" + v.name).sort(),
            });
            const r = pick(real);
            for (const k of Object.keys(r.labels)) if (!(k in model.metadata.labels)) delete r.labels[k]; // chart/version labels the model leaves out
            assert.deepEqual(r, pick(model), `${stack} ${app.key}: the model differs from helm template`);
        }
    }
});
