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
    ignoreDifferences: Array<{ group?: string; kind: string; name?: string; namespace?: string; jsonPointers?: string[] }>;
}

/** One committed child Application (YAML text; `where` names it in errors). */
export function parseApplication(text: string, where: string): ChildApplication {
    const a = YAML.parse(text);
    const s = a?.spec?.source;
    if (a?.kind !== "Application" || !s?.chart || !s?.targetRevision) throw new Error(`${where}: not an Application of a helm chart (spec.source.chart, targetRevision)`);
    return {
        name: a.metadata.name, chart: s.chart, version: String(s.targetRevision), releaseName: s.helm?.releaseName ?? a.metadata.name,
        namespace: a.spec.destination.namespace, values: s.helm?.values ?? "", ignoreDifferences: a.spec.ignoreDifferences ?? [],
    };
}

/** The child Applications of a stack as committed (gitops/<stack>/*.yaml). */
export function childApplications(repo: string, stack: string): ChildApplication[] {
    const dir = path.join(repo, "gitops", stack);
    return fs.readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort().map((f) => parseApplication(fs.readFileSync(path.join(dir, f), "utf8"), `${dir}/${f}`));
}

/**
 * RespectIgnoreDifferences: for an object an ignoreDifferences entry names, the fields at its
 * JSON pointers take their live values before the apply (Argo CD's normalization of the target).
 */
export function respectIgnoreDifferences(desired: K8sObject, live: K8sObject | undefined, rules: ChildApplication["ignoreDifferences"]): K8sObject {
    if (!live) return desired;
    const group = String(desired.apiVersion ?? "").includes("/") ? String(desired.apiVersion).split("/")[0] : "";
    const out = structuredClone(desired);
    for (const r of rules) {
        if ((r.group ?? "") !== group || r.kind !== desired.kind) continue;
        if (r.name && r.name !== desired.metadata?.name) continue;
        if (r.namespace && r.namespace !== desired.metadata?.namespace) continue;
        for (const pointer of r.jsonPointers ?? []) {
            const keys = pointer.split("/").slice(1).map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
            let from: any = live;
            let to: any = out;
            for (const k of keys.slice(0, -1)) {
                from = from?.[k];
                to = to[k] ??= {};
            }
            const last = keys[keys.length - 1];
            if (from?.[last] === undefined) delete to[last];
            else to[last] = structuredClone(from[last]);
        }
    }
    return out;
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
    fs.writeFileSync(ctx.path(`child-${app.name}-${app.version}.json`), JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }, null, 1));
    // The claims' volumes: no provisioner here (as for the stack's own claims).
    const volumes = standInVolumes(objects, ctx.path("volumes-children")).map((v) => ({ ...v, metadata: { ...v.metadata, labels: { ...v.metadata!.labels, "ops-e2e/child": app.name } } }));
    if (volumes.length) {
        fs.writeFileSync(ctx.path(`child-${app.name}-${app.version}-volumes.json`), JSON.stringify({ apiVersion: "v1", kind: "List", items: volumes }));
        await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path(`child-${app.name}-${app.version}-volumes.json`)], { quiet: true });
    }
    const applied: string[] = [];
    const refused: string[] = [];
    for (const desired of objects) {
        const o = app.ignoreDifferences.length ? respectIgnoreDifferences(desired, await liveObject(ctx, desired), app.ignoreDifferences) : desired;
        const r = await ctx.kubectl(["apply", "--server-side", "--force-conflicts", "--field-manager", FIELD_MANAGER, "-f", "-"], { input: JSON.stringify(o), allowFail: true, quiet: true });
        if (r.code === 0) applied.push(identity(o));
        else refused.push(`${identity(o)}: ${r.stderr.trim().split("\n").pop()}`);
    }
    const workloads: string[] = [];
    for (const o of objects.filter((x) => x.kind === "Deployment" || x.kind === "StatefulSet")) {
        if (refused.some((x) => x.startsWith(`${identity(o)}:`))) continue;
        const ns = o.metadata!.namespace!;
        const name = o.metadata!.name!;
        // The rollout of this revision done (updated replicas available), not only an earlier one's Available.
        await ctx.kubectl(["-n", ns, "rollout", "status", `${o.kind === "Deployment" ? "deployment" : "statefulset"}/${name}`, "--timeout=180s"]);
        workloads.push(identity(o));
    }
    return { app, applied, refused, workloads, seconds: since(t0) };
}

async function liveObject(ctx: Context, o: K8sObject): Promise<K8sObject | undefined> {
    const r = await ctx.kubectl(["get", "-f", "-", "-o", "json"], { input: JSON.stringify(o), allowFail: true, quiet: true });
    if (r.code !== 0) return undefined;
    // kubectl get -f answers with a List, also for one object.
    const got = JSON.parse(r.stdout) as K8sObject & { items?: K8sObject[] };
    return got.kind === "List" ? got.items?.[0] : got;
}

/** Argo CD's prune of an Application deleted with its resources: the objects, then their stand-in volumes. */
async function removeChild(ctx: Context, app: ChildApplication): Promise<void> {
    await ctx.kubectl(["delete", "-f", ctx.path(`child-${app.name}-${app.version}.json`), "--wait", "--timeout=120s", "--ignore-not-found"], { quiet: true });
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

/**
 * Where no earlier pin is in this repository's history (the children's pins never changed), the
 * upgrade starts from the previous minor's last release, as published in each chart's repository.
 */
export const PREVIOUS_MINOR: Record<string, string> = { "uptime-kuma": "2.20.0", "open-webui": "10.1.0", grafana: "8.5.12" };

/**
 * The state a child is upgraded from: the previous minor's chart, today's values (the stack's
 * admission policies judge it as they are now) with the pod labels as the Application was first
 * committed (git history): the one value of the first state that reaches an immutable field (the
 * uptime monitor's chart builds its Deployment selector from podLabels), and no ignoreDifferences.
 */
async function previousApplication(ctx: Context, stack: string, current: ChildApplication): Promise<ChildApplication> {
    const file = `gitops/${stack}/${current.name}.yaml`;
    const first = (await ctx.run("git", ["-C", ctx.repo, "log", "--diff-filter=A", "--format=%H", "--", file], { quiet: true })).stdout.trim().split("\n").pop();
    if (!first) throw new Error(`${file}: no commit adds it (a shallow clone?): the upgrade starts from its first committed pod labels`);
    const text = (await ctx.run("git", ["-C", ctx.repo, "show", `${first}:${file}`], { quiet: true })).stdout;
    const firstValues = YAML.parse(parseApplication(text, `${first.slice(0, 7)}:${file}`).values) ?? {};
    const values = YAML.parse(current.values) ?? {};
    if (firstValues.podLabels === undefined) delete values.podLabels;
    else values.podLabels = firstValues.podLabels;
    const version = PREVIOUS_MINOR[current.chart];
    if (!version) throw new Error(`no previous version known for chart ${current.chart}`);
    return { ...current, version, values: YAML.stringify(values), ignoreDifferences: [] };
}

/**
 * Upgrades that go through (issue 28, part 2): each child synced from its previous state (the
 * previous minor's chart, the Application's values as first committed), then to the current
 * Application, without an immutable-field error; the uptime monitor's selector (which its chart
 * builds from podLabels) is kept by ignoreDifferences + RespectIgnoreDifferences, and the step
 * shows the sync without it would be refused.
 */
export async function upgrades(ctx: Context, io: StepIO, stack = "ci"): Promise<void> {
    const src = chartSources(ctx);
    if ("missing" in src) throw new Error(src.missing);
    const failures: string[] = [];
    for (const current of childApplications(ctx.repo, stack)) {
        const before = await previousApplication(ctx, stack, current);
        const t0 = process.hrtime.bigint();
        const first = await syncChild(ctx, io, src, before);
        if (first.refused.length) failures.push(...first.refused.map((r) => `${before.chart} ${before.version}: ${r}`));
        // Without RespectIgnoreDifferences: would the API server take the current objects as they render?
        const chartDir = pinnedChart(src, current.chart, current.version);
        const rendered = (await helmTemplate(ctx, src, chartDir, current)).map((o) => tracked(o, current.name));
        const immutable: string[] = [];
        for (const o of rendered.filter((x) => x.kind === "Deployment" || x.kind === "StatefulSet")) {
            const r = await ctx.kubectl(["apply", "--server-side", "--force-conflicts", "--dry-run=server", "--field-manager", FIELD_MANAGER, "-f", "-"], { input: JSON.stringify(o), allowFail: true, quiet: true });
            if (r.code !== 0 && /immutable/.test(r.stderr)) immutable.push(identity(o));
        }
        const selectorBefore = await selectors(ctx, rendered);
        const second = await syncChild(ctx, io, src, current);
        if (second.refused.length) failures.push(...second.refused.map((r) => `${current.chart} ${current.version}: ${r}`));
        const selectorAfter = await selectors(ctx, rendered);
        io.result(`${current.chart} ${before.version} -> ${current.version} (pod labels as first committed -> as now): ${first.applied.length} then ${second.applied.length} objects applied, ${first.refused.length + second.refused.length} refused, ${second.workloads.length} workloads ready in ${since(t0)} s`
            + (immutable.length ? `; without ignoreDifferences the API server refuses ${immutable.join(", ")} (field is immutable), with it the live selector is kept (${selectorAfter === selectorBefore ? "unchanged" : "CHANGED"})` : "; no immutable field changes"));
        if (immutable.length && current.ignoreDifferences.length === 0) failures.push(`${current.chart}: ${immutable.join(", ")} would be refused (field is immutable) and the Application ignores no difference`);
        if (selectorAfter !== selectorBefore) failures.push(`${current.chart}: a workload's selector changed on the cluster`);
        await removeChild(ctx, current);
        await removeChild(ctx, before);
    }
    if (failures.length) throw new Error(failures.join("; "));
}

async function selectors(ctx: Context, objects: K8sObject[]): Promise<string> {
    const out: string[] = [];
    for (const o of objects.filter((x) => x.kind === "Deployment" || x.kind === "StatefulSet")) {
        const live = await liveObject(ctx, o);
        out.push(`${identity(o)} ${JSON.stringify(live?.spec?.selector ?? null)}`);
    }
    return out.join("; ");
}
