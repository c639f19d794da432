/**
 * The add-ons from the real charts through the engine (issue 28; only with OPS_CHART_SOURCES): the
 * loopback chart repository serves each pinned add-on chart packaged from its source (checked
 * against the pin) with helm 3.19.0, and its previous version for the upgrade; the CRDs of the crds
 * step make way for the charts' own; the webhook stand-in (tools/e2e/webhookStandIn.ts) answers
 * the add-ons' admission webhooks and metrics.k8s.io. After each `pulumi up`, one line per chart:
 * objects of its release, refused (not on the cluster), workloads ready, hooks, time.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { chartSources, CLUSTER_SCOPED, pinnedChart, type ChartSources } from "../harness/charts";
import type { ChartRepo } from "../harness/chartRepo";
import { releasesOf } from "../harness/chartRepo";
import type { Context, StepIO } from "../harness/context";

/**
 * The version before each pin: the pins never changed in this repository's history, so the latest
 * release of the previous minor (sources: docs/e2e.md, "Real charts").
 */
export const PREVIOUS: Record<string, string> = {
    "ingress-nginx": "4.10.6",
    "cert-manager": "v1.15.5",
    "argo-cd": "7.6.12",
    "kube-prometheus-stack": "66.2.2",
    "metrics-server": "3.11.0",
    reloader: "1.1.1",
    vpa: "4.6.0",
};

/** The stack config key of each chart's pinned version (components/platform/addons.ts, config/areas/platform.ts). */
export const VERSION_KEY: Record<string, string> = {
    "ingress-nginx": "ops:addonsIngressNginxVersion",
    "cert-manager": "ops:addonsCertManagerVersion",
    "argo-cd": "ops:addonsArgoCdVersion",
    "kube-prometheus-stack": "ops:addonsMonitoringVersion",
    "metrics-server": "ops:addonsMetricsServerVersion",
    reloader: "ops:addonsReloaderVersion",
    vpa: "ops:addonsVpaVersion",
};

/** The CRD groups the add-on charts install themselves (the crds step's copies make way). */
const CHART_CRD_GROUPS = ["argoproj.io", "cert-manager.io", "acme.cert-manager.io", "monitoring.coreos.com", "autoscaling.k8s.io"];

/** The sources and helm when the real add-on charts are used; otherwise undefined. */
export function realCharts(ctx: Context): ChartSources | undefined {
    const s = chartSources(ctx);
    return "missing" in s ? undefined : s;
}

export function skipReason(ctx: Context): string | undefined {
    const s = chartSources(ctx);
    return "missing" in s ? s.missing : undefined;
}

/** Packs each pinned add-on chart and its previous version into the repository (helm package). */
export async function addCharts(ctx: Context, src: ChartSources, repo: ChartRepo, resourcesJson: string): Promise<string[]> {
    const took: string[] = [];
    const pins = [...new Map(releasesOf(resourcesJson).map((r) => [r.chart, r.version])).entries()];
    for (const [chart, version] of pins) {
        const previous = PREVIOUS[chart];
        if (!previous) throw new Error(`no previous version of ${chart} known (tools/e2e/steps/addons.ts PREVIOUS)`);
        for (const v of [previous, version]) {
            const dir = pinnedChart(src, chart, v);
            await ctx.run(src.helm, ["package", dir, "--destination", repo.dir], { quiet: true });
            repo.addPackage(path.join(repo.dir, `${chart}-${v}.tgz`), chart, v, dir);
            took.push(`${chart}-${v}`);
        }
    }
    return took;
}

/** Deletes the crds step's copies of the CRDs the charts install (no objects of them are left). */
export async function removeStandInCrds(ctx: Context): Promise<string[]> {
    const crds = await ctx.kubectlJson<{ items: Array<{ metadata: { name: string }; spec: { group: string } }> }>(["get", "crd", "-l", "app.kubernetes.io/managed-by=ops-e2e"]);
    const names = crds.items.filter((c) => CHART_CRD_GROUPS.includes(c.spec.group)).map((c) => c.metadata.name);
    if (names.length) await ctx.kubectl(["delete", "crd", ...names, "--wait", "--timeout=120s"], { quiet: true });
    // kubectl's discovery cache goes (the ingress stand-in's kubectl may be writing it: moved aside first).
    const aside = ctx.path(`kube-cache.old-${Date.now()}`);
    try {
        fs.renameSync(ctx.path("kube-cache"), aside);
    } catch {
        return names;
    }
    // A write that was under way may still land in the moved tree: what is left goes with the work folder.
    try {
        fs.rmSync(aside, { recursive: true, force: true, maxRetries: 5 });
    } catch {
        // left for the work folder's removal
    }
    return names;
}

/** Starts the webhook stand-in (stopped by run.sh; its addresses removed on exit). */
export function startWebhookStandIn(ctx: Context): void {
    ctx.start("webhook-standin", ctx.tsx, [path.join(ctx.e2eDir, "webhookStandIn.ts"), ctx.bin("kubectl", ctx.tools.k8s), ctx.kubeconfig, ctx.path("webhook-standin")], { cwd: ctx.repo });
}

/** What the stand-in answered (its status file). */
export function standInStatus(ctx: Context): string {
    const f = ctx.path("webhook-standin", "status.json");
    if (!fs.existsSync(f)) return "webhook stand-in: no status yet";
    const s = JSON.parse(fs.readFileSync(f, "utf8")) as { served: Array<{ namespace: string; name: string; port: number; ip: string; reviews: number; metrics: number }>; failed: Record<string, string> };
    const failed = Object.entries(s.failed);
    return `webhook stand-in: ${s.served.map((x) => `${x.namespace}/${x.name} at ${x.ip}:${x.port} (${x.reviews} AdmissionReviews, ${x.metrics} metrics requests)`).join("; ")}${failed.length ? `; NOT served: ${failed.map(([k, v]) => `${k}: ${v}`).join("; ")}` : ""}`;
}

/** Sets every add-on's version in a stack's config: the previous versions or the pins. */
export async function setVersions(ctx: Context, stack: string, resourcesJson: string, which: "previous" | "pinned"): Promise<string> {
    const out: string[] = [];
    for (const r of releasesOf(resourcesJson)) {
        const v = which === "previous" ? PREVIOUS[r.chart] : r.version;
        await ctx.pulumi(["config", "set", "--stack", stack, VERSION_KEY[r.chart], v]);
        out.push(`${r.chart} ${v}`);
    }
    return out.join(", ");
}

interface Obj {
    kind: string;
    metadata: { name: string; namespace?: string; creationTimestamp?: string; managedFields?: Array<{ time?: string }> };
    spec?: any;
    status?: any;
}

function ready(o: Obj): boolean {
    const s = o.status ?? {};
    if (o.kind === "Deployment") return (s.conditions ?? []).some((c: any) => c.type === "Available" && c.status === "True") && (s.updatedReplicas ?? 0) === (o.spec?.replicas ?? 1);
    if (o.kind === "StatefulSet") return (s.readyReplicas ?? 0) === (o.spec?.replicas ?? 1);
    if (o.kind === "DaemonSet") return s.desiredNumberScheduled > 0 && s.numberReady === s.desiredNumberScheduled;
    return true;
}

export interface ChartLine {
    chart: string;
    version: string;
    applied: number;
    refused: number;
    workloads: number;
    ready: number;
    hooks: number;
    seconds: number;
}

/**
 * One line per add-on release of a stack: objects of its manifest (helm get manifest), refused
 * (not on the cluster; must be 0), workloads ready, hooks, time (helm's release record: created
 * when the install or upgrade began, last written when it was deployed).
 */
export async function chartLines(ctx: Context, io: StepIO, src: ChartSources, resourcesJson: string, label: string): Promise<ChartLine[]> {
    const lines: ChartLine[] = [];
    for (const r of releasesOf(resourcesJson)) {
        const listed = JSON.parse((await ctx.run(src.helm, ["list", "-n", r.namespace, "--filter", `^${r.name}$`, "-o", "json"], { quiet: true })).stdout) as Array<{ chart: string; revision: string; status: string }>;
        const status = listed[0];
        if (!status) throw new Error(`no helm release ${r.namespace}/${r.name}`);
        if (status.status !== "deployed") throw new Error(`helm release ${r.namespace}/${r.name} is ${status.status}, not deployed`);
        const version = status.chart.slice(r.chart.length + 1);
        const manifest = (await ctx.run(src.helm, ["get", "manifest", r.name, "-n", r.namespace], { quiet: true })).stdout;
        // The release's namespace for its namespaced objects that name none (as helm installs them).
        const objs = YAML.parseAllDocuments(manifest).map((d) => d.toJS() as Obj).filter((o) => o?.kind)
            .map((o) => (CLUSTER_SCOPED.has(o.kind) || o.metadata.namespace ? o : { ...o, metadata: { ...o.metadata, namespace: r.namespace } }));
        const file = ctx.path(`release-${label.replace(/\W+/g, "-")}-${r.name}.json`);
        fs.writeFileSync(file, JSON.stringify({ apiVersion: "v1", kind: "List", items: objs }));
        const got = objs.length ? (await ctx.kubectl(["get", "-f", file, "--ignore-not-found", "-o", "json"], { quiet: true })).stdout.trim() : "";
        const live = (got ? JSON.parse(got) : { items: [] }) as { items?: Obj[]; kind?: string };
        const items: Obj[] = live.items ?? (live.kind ? [live as Obj] : []);
        const liveKeys = new Set(items.map((o) => `${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`));
        const refused = objs.filter((o) => !liveKeys.has(`${o.kind}/${o.metadata.namespace ?? ""}/${o.metadata.name}`));
        const workloads = items.filter((o) => ["Deployment", "StatefulSet", "DaemonSet"].includes(o.kind));
        const notReady = workloads.filter((o) => !ready(o));
        // Test hooks run only on `helm test`, never on install or upgrade.
        const allHooks = YAML.parseAllDocuments((await ctx.run(src.helm, ["get", "hooks", r.name, "-n", r.namespace], { quiet: true })).stdout).map((d) => d.toJS() as Obj & { metadata: { annotations?: Record<string, string> } }).filter((o) => o?.kind);
        const isTest = (o: (typeof allHooks)[number]) => /(^|,)\s*test(-success)?\s*(,|$)/.test(o.metadata.annotations?.["helm.sh/hook"] ?? "");
        const hooks = allHooks.filter((o) => !isTest(o));
        const tests = allHooks.length - hooks.length;
        const record = JSON.parse((await ctx.kubectl(["-n", r.namespace, "get", "secret", `sh.helm.release.v1.${r.name}.v${status.revision}`, "--show-managed-fields", "-o", "json"], { quiet: true })).stdout) as Obj;
        const begun = Date.parse(record.metadata.creationTimestamp ?? "");
        const written = Math.max(...(record.metadata.managedFields ?? []).map((m) => Date.parse(m.time ?? "")).filter((t) => !Number.isNaN(t)));
        const line: ChartLine = { chart: r.chart, version, applied: objs.length, refused: refused.length, workloads: workloads.length, ready: workloads.length - notReady.length, hooks: hooks.length, seconds: Math.round((written - begun) / 1000) };
        lines.push(line);
        io.result(`${label}: ${r.chart} ${line.version} (release ${r.namespace}/${r.name} revision ${status.revision}, deployed): ${line.applied} objects applied, ${line.refused} refused, ${line.ready}/${line.workloads} workloads ready, ${line.hooks} hooks run (${hooks.map((h) => h.kind).join(", ") || "none"})${tests ? `, ${tests} test hooks not run (helm test only)` : ""}, ${line.seconds} s`);
        if (refused.length) throw new Error(`${r.chart}: not on the cluster: ${refused.map((o) => `${o.kind} ${o.metadata.name}`).join(", ")}`);
        if (notReady.length) throw new Error(`${r.chart}: not ready: ${notReady.map((o) => `${o.kind} ${o.metadata.namespace}/${o.metadata.name}`).join(", ")}`);
    }
    return lines;
}

/** The Argo CD Applications on the cluster, admitted against the chart's own CRD (not the crds step's). */
export async function applicationsLine(ctx: Context): Promise<string> {
    const crd = await ctx.kubectlJson<Obj & { metadata: { labels?: Record<string, string>; annotations?: Record<string, string> } }>(["get", "crd", "applications.argoproj.io"]);
    const owner = crd.metadata.annotations?.["meta.helm.sh/release-name"];
    if (!owner || crd.metadata.labels?.["app.kubernetes.io/managed-by"] === "ops-e2e") throw new Error("applications.argoproj.io is not the argo-cd chart's CRD");
    const apps = await ctx.names(["applications.argoproj.io", "-A"]);
    if (!apps.length) throw new Error("no Argo CD Application on the cluster");
    return `${apps.length} Argo CD Applications admitted against the argo-cd chart's own CRD (release ${owner}): ${apps.map((a) => a.split("/").pop()).join(", ")}`;
}
