/**
 * The GitOps children on the cluster, as Argo CD would apply them (issue 28): for each child
 * Application the program commits (gitops/<stack>/*.yaml, what the parent application syncs), the
 * pinned chart's source (OPS_CHART_SOURCES, checked against the pin) rendered with `helm template`
 * with the Application's release name, namespace and values, each object labelled with Argo CD's
 * tracking label (app.kubernetes.io/instance: <application>) and applied server-side under Argo CD's
 * field manager, in Argo CD's order (sync wave, then kind). The stack's own admission policies
 * judge every object; every workload must become ready on the kwok node.
 *
 * A STAND-IN for Argo CD's application controller (not reachable here, docs/e2e.md says what it
 * does not do): no sync hooks or waves beyond the annotation's order, no pruning, no health checks
 * beyond the workloads' own conditions, no self-heal.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as YAML from "yaml";
import { identity, standInVolumes, type K8sObject } from "../objects";
import { chartSources, helmTemplate, pinnedChart, type ChartSources } from "../harness/charts";
import { since, type Context, type StepIO } from "../harness/context";

/** Argo CD's (and helm's) install order of kinds; other kinds after these. */
const KIND_ORDER = ["Namespace", "NetworkPolicy", "ResourceQuota", "LimitRange", "PodDisruptionBudget", "ServiceAccount", "Secret", "ConfigMap", "StorageClass",
    "PersistentVolume", "PersistentVolumeClaim", "CustomResourceDefinition", "ClusterRole", "ClusterRoleBinding", "Role", "RoleBinding", "Service", "DaemonSet", "Pod",
    "ReplicationController", "ReplicaSet", "Deployment", "HorizontalPodAutoscaler", "StatefulSet", "Job", "CronJob", "IngressClass", "Ingress", "APIService"];
const TRACKING_LABEL = "app.kubernetes.io/instance";
const FIELD_MANAGER = "argocd-controller";

export interface ChildApplication {
    name: string;
    chart: string;
    version: string;
    releaseName: string;
    namespace: string;
    values: string;
}

/** The child Applications of a stack as committed (gitops/<stack>/*.yaml). */
export function childApplications(repo: string, stack: string): ChildApplication[] {
    const dir = path.join(repo, "gitops", stack);
    return fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort().map((f) => {
        const a = YAML.parse(fs.readFileSync(path.join(dir, f), "utf8"));
        const s = a?.spec?.source;
        if (a?.kind !== "Application" || !s?.chart || !s?.targetRevision) throw new Error(`${dir}/${f}: not an Application of a helm chart (spec.source.chart, targetRevision)`);
        return { name: a.metadata.name, chart: s.chart, version: String(s.targetRevision), releaseName: s.helm?.releaseName ?? a.metadata.name, namespace: a.spec.destination.namespace, values: s.helm?.values ?? "" };
    });
}

export function syncOrder(objects: K8sObject[]): K8sObject[] {
    const wave = (o: K8sObject) => Number(o.metadata?.annotations?.["argocd.argoproj.io/sync-wave"] ?? 0);
    const kind = (o: K8sObject) => {
        const i = KIND_ORDER.indexOf(String(o.kind));
        return i < 0 ? KIND_ORDER.length : i;
    };
    return objects.map((o, i) => ({ o, i })).sort((a, b) => wave(a.o) - wave(b.o) || kind(a.o) - kind(b.o) || a.i - b.i).map((x) => x.o);
}

const tracked = (o: K8sObject, app: string): K8sObject => ({ ...o, metadata: { ...o.metadata, labels: { ...o.metadata?.labels, [TRACKING_LABEL]: app } } });

interface ChildResult {
    app: ChildApplication;
    applied: string[];
    refused: string[];
    workloads: string[];
    seconds: number;
}

async function syncChild(ctx: Context, io: StepIO, src: ChartSources, app: ChildApplication): Promise<ChildResult> {
    const t0 = process.hrtime.bigint();
    const chartDir = pinnedChart(src, app.chart, app.version);
    const objects = syncOrder((await helmTemplate(ctx, src, chartDir, app)).map((o) => tracked(o, app.name)));
    fs.writeFileSync(ctx.path(`child-${app.name}.json`), JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 1));
    // The claims' volumes: no provisioner here (as for the stack's own claims).
    const volumes = standInVolumes(objects, ctx.path("volumes-children")).map((v) => ({ ...v, metadata: { ...v.metadata, labels: { ...v.metadata!.labels, "ops-e2e/child": app.name } } }));
    if (volumes.length) {
        fs.writeFileSync(ctx.path(`child-${app.name}-volumes.json`), JSON.stringify({ apiVersion: "v1", kind: "List", items: volumes }));
        await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path(`child-${app.name}-volumes.json`)], { quiet: true });
    }
    const applied: string[] = [];
    const refused: string[] = [];
    for (const o of objects) {
        const r = await ctx.kubectl(["apply", "--server-side", "--force-conflicts", "--field-manager", FIELD_MANAGER, "-f", "-"], { input: JSON.stringify(o), allowFail: true, quiet: true });
        if (r.code === 0) applied.push(identity(o));
        else refused.push(`${identity(o)}: ${r.stderr.trim().split("\n").pop()}`);
    }
    const workloads: string[] = [];
    for (const o of objects.filter((x) => x.kind === "Deployment" || x.kind === "StatefulSet")) {
        if (refused.some((x) => x.startsWith(`${identity(o)}:`))) continue;
        const ns = o.metadata!.namespace!;
        const name = o.metadata!.name!;
        if (o.kind === "Deployment") await ctx.kubectl(["-n", ns, "wait", "--for=condition=Available", `deployment/${name}`, "--timeout=180s"]);
        else await ctx.kubectl(["-n", ns, "rollout", "status", `statefulset/${name}`, "--timeout=180s"]);
        workloads.push(identity(o));
    }
    return { app, applied, refused, workloads, seconds: since(t0) };
}

/** Argo CD's prune of an Application deleted with its resources: the objects, then their stand-in volumes. */
async function removeChild(ctx: Context, app: ChildApplication): Promise<void> {
    await ctx.kubectl(["delete", "-f", ctx.path(`child-${app.name}.json`), "--wait", "--timeout=120s", "--ignore-not-found"], { quiet: true });
    await ctx.kubectl(["delete", "pv", "-l", `ops-e2e/child=${app.name}`, "--wait", "--timeout=60s", "--ignore-not-found"], { quiet: true });
}

export function childrenSkipReason(ctx: Context): string | undefined {
    const s = chartSources(ctx);
    return "missing" in s ? s.missing : undefined;
}

/**
 * The children of the deployed stack, synced as above, then removed (so the steps after see the
 * stack as before). Fails when an object is refused or a workload is not ready.
 */
export async function children(ctx: Context, io: StepIO, stack = "ci"): Promise<void> {
    const src = chartSources(ctx);
    if ("missing" in src) throw new Error(src.missing);
    const results: ChildResult[] = [];
    for (const app of childApplications(ctx.repo, stack)) {
        const r = await syncChild(ctx, io, src, app);
        results.push(r);
        for (const x of r.refused) io.log(`refused: ${x}`);
    }
    for (const r of results) {
        io.result(`${r.app.chart} ${r.app.version} (Application ${r.app.name}, namespace ${r.app.namespace}): ${r.applied.length} objects applied, ${r.refused.length} refused, ${r.workloads.length} workloads ready (${r.workloads.join(", ") || "none"}) in ${r.seconds} s`);
    }
    for (const r of results) await removeChild(ctx, r.app);
    const refused = results.flatMap((r) => r.refused);
    if (refused.length) throw new Error(`refused: ${refused.join("; ")}`);
}
