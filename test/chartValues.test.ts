/**
 * Every chart value the program sets (add-on Releases and the GitOps children) is a value of that
 * chart at the pinned version: a key of its values.yaml (../shared/reference/chart-values/), under a
 * free-form default ({} or null), or one of the paths below that the chart's templates read although
 * values.yaml only mentions them in comments (each checked in the chart's templates at the pinned tag).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import { test } from "node:test";
import type { StackConfig } from "../config";
import {
    argoCdValues, certManagerValues, ingressNginxValues, metricsServerValues, monitoringValues, reloaderValues, vpaValues,
} from "../components/platform/addonValues";
import { childApps } from "../components/platform/gitopsChildren";
import { CHART_VALUES_DIR, chartValuesFile, readChartValues, unknownValuePaths } from "../tools/chartValues";
import { offlineStackConfig } from "../tools/genGitops";
import { listStacks } from "../cli/harness/stackConfig";

/** chart -> value path (prefix) -> where the pinned chart's templates read it. */
const READ_BY_TEMPLATES: Record<string, Record<string, string>> = {
    "ingress-nginx": {
        "controller.resources.limits": "4.11.3 templates/controller-deployment.yaml: resources: {{ toYaml .Values.controller.resources }} (values.yaml sets only requests, limits are commented out)",
    },
    "cert-manager": {
        "image.tag": "v1.16.2 templates/_helpers.tpl define \"image\": (default $defaultTag .tag) of image, webhook.image, cainjector.image, startupapicheck.image (commented out in values.yaml)",
        "webhook.image.tag": "v1.16.2 templates/_helpers.tpl define \"image\" (see image.tag)",
        "cainjector.image.tag": "v1.16.2 templates/_helpers.tpl define \"image\" (see image.tag)",
        "startupapicheck.image.tag": "v1.16.2 templates/_helpers.tpl define \"image\" (see image.tag)",
        "acmesolver.image.tag": "v1.16.2 templates/deployment.yaml: --acme-http01-solver-image=<registry/><repository>:{{ default $.Chart.AppVersion .tag }} with .Values.acmesolver.image (tag commented out in values.yaml)",
    },
    reloader: {
        "reloader.deployment.labels": "1.2.0 templates/deployment.yaml: {{ toYaml .Values.reloader.deployment.labels }} on the Deployment and its pod template (values.yaml's map has provider, group, version; helm merges the program's keys into it)",
    },
    "metrics-server": {
        "resources.limits": "3.12.2 templates/deployment.yaml: resources: {{- toYaml .Values.resources }} (values.yaml sets only requests)",
    },
    "kube-prometheus-stack": {
        "kube-state-metrics.image": "subchart kube-state-metrics 5.27.0 values.yaml image.{registry,repository,tag,sha}; templates/_helpers.tpl kube-state-metrics.image prints <registry>/<repository>:<tag>@<sha>",
        "kube-state-metrics.resources": "subchart kube-state-metrics 5.27.0 values.yaml resources: {}",
        "prometheus-node-exporter.image": "subchart prometheus-node-exporter 4.42.0 values.yaml image.{registry,repository,tag,digest}",
        "prometheus-node-exporter.resources": "subchart prometheus-node-exporter 4.42.0 values.yaml resources: {}",
        "prometheus-node-exporter.containerSecurityContext": "subchart prometheus-node-exporter 4.42.0 values.yaml containerSecurityContext (the node-exporter container's securityContext)",
        "prometheus-node-exporter.securityContext": "subchart prometheus-node-exporter 4.42.0 values.yaml securityContext (the pod's; fsGroup, runAsGroup, runAsNonRoot, runAsUser 65534 there)",
        "alertmanager.alertmanagerSpec.version": "templates/alertmanager/alertmanager.yaml: version: {{ default .Values.alertmanager.alertmanagerSpec.image.tag .Values.alertmanager.alertmanagerSpec.version }} (not in values.yaml)",
    },
    "argo-cd": {
        "configs.cm": "7.7.11 templates/_helpers.tpl argo-cd.config.cm: every key of configs.cm except create/annotations becomes a key of the argocd-cm ConfigMap (accounts.<name>, users.anonymous.enabled are Argo CD settings)",
    },
    "uptime-kuma": {
        "ingress.className": "2.21.2 templates/ingress.yaml: ingressClassName: {{ .Values.ingress.className }} (commented out in values.yaml)",
        "ingress.annotations": "2.21.2 templates/ingress.yaml: annotations: {{ toYaml .Values.ingress.annotations }} (values.yaml has example keys)",
    },
    grafana: {
        podLabels: "8.6.4 templates/deployment.yaml: {{- with .Values.podLabels }} on the pod template (commented out in values.yaml)",
        "ingress.ingressClassName": "8.6.4 templates/ingress.yaml: ingressClassName: {{ .Values.ingress.ingressClassName }} (commented out in values.yaml)",
        "securityContext.seccompProfile": "8.6.4 templates/_pod.tpl: securityContext: {{ toYaml .Values.securityContext }} (the whole map is the pod's securityContext)",
        "containerSecurityContext.readOnlyRootFilesystem": "8.6.4 templates/_pod.tpl: the grafana container's securityContext: {{ toYaml .Values.containerSecurityContext }}",
    },
};

interface ChartSetting {
    chart: string;
    version: string;
    values: unknown;
}

function settingsOf(cfg: StackConfig): ChartSetting[] {
    const a = cfg.addons;
    return [
        { chart: a.ingressNginx.chart, version: a.ingressNginx.version, values: ingressNginxValues(cfg) },
        { chart: a.certManager.chart, version: a.certManager.version, values: certManagerValues(cfg) },
        { chart: a.reloader.chart, version: a.reloader.version, values: reloaderValues(cfg) },
        { chart: a.metricsServer.chart, version: a.metricsServer.version, values: metricsServerValues(cfg) },
        { chart: a.vpa.chart, version: a.vpa.version, values: vpaValues(cfg) },
        { chart: a.argoCd.chart, version: a.argoCd.version, values: argoCdValues(cfg) },
        { chart: a.monitoring.chart, version: a.monitoring.version, values: monitoringValues(cfg) },
        ...childApps(cfg).map((c) => ({ chart: c.chart, version: c.version, values: c.values })),
    ];
}

const allowed = (chart: string, p: string) =>
    Object.keys(READ_BY_TEMPLATES[chart] ?? {}).find((prefix) => p === prefix || p.startsWith(`${prefix}.`) || p.startsWith(`${prefix}[`));

function skipWithoutReference(t: { skip: (m: string) => void }): boolean {
    if (fs.existsSync(CHART_VALUES_DIR)) return false;
    if (process.env.CI === "true") assert.fail(`${CHART_VALUES_DIR} is missing under CI`);
    t.skip(`${CHART_VALUES_DIR} is absent: clone the repository next to shared/`);
    return true;
}

test("the walker finds a value path that values.yaml does not have, and accepts free-form defaults", () => {
    const ref = { controller: { replicaCount: 1, config: {}, podLabels: null, resources: { requests: { cpu: "100m" } } } };
    assert.deepEqual(unknownValuePaths({ controller: { replicaCount: 2, config: { "proxy-body-size": "1m" }, podLabels: { a: "b" } } }, ref), []);
    assert.deepEqual(unknownValuePaths({ controller: { replicas: 2, resources: { limits: { cpu: "1" } } } }, ref), ["controller.replicas", "controller.resources.limits"]);
    assert.deepEqual(unknownValuePaths({ controller: { replicaCount: { x: 1 } } }, ref), ["controller.replicaCount (a map where values.yaml has number)"]);
    assert.deepEqual(unknownValuePaths({ "a.b": 1 }, {}), ['["a.b"]']);
});

test("every chart the program pins has its values.yaml in the reference folder (open-webui 10.3.1 was never published)", (t) => {
    if (skipWithoutReference(t)) return;
    for (const stack of listStacks()) {
        for (const s of settingsOf(offlineStackConfig(stack))) assert.ok(fs.existsSync(chartValuesFile(s.chart, s.version)), `${stack}: no values.yaml of ${s.chart} ${s.version} in ${CHART_VALUES_DIR}`);
    }
    assert.notEqual(offlineStackConfig("dev").gitops.chatUi.version, "10.3.1");
});

test("every chart value the program sets exists in the chart's values.yaml at the pinned version, or is read by its templates", (t) => {
    if (skipWithoutReference(t)) return;
    const used = new Set<string>();
    const problems: string[] = [];
    for (const stack of listStacks()) {
        for (const s of settingsOf(offlineStackConfig(stack))) {
            for (const p of unknownValuePaths(s.values, readChartValues(s.chart, s.version))) {
                const prefix = allowed(s.chart, p);
                if (prefix) used.add(`${s.chart} ${prefix}`);
                else problems.push(`${stack}: ${s.chart} ${s.version}: ${p} is not a value of the chart`);
            }
        }
    }
    assert.deepEqual(problems, []);
    // Every exception is still needed (a stale one would hide a future mistake).
    const listed = Object.entries(READ_BY_TEMPLATES).flatMap(([chart, paths]) => Object.keys(paths).map((p) => `${chart} ${p}`));
    assert.deepEqual(listed.filter((l) => !used.has(l)), []);
});
