/**
 * The pods of the add-on charts (components/platform/addons.ts): the offline render shows each
 * add-on as a helm Release with its values, not the chart's objects, so explain's capacity would
 * count none of them. Here each pinned chart's pod-running objects are modelled from the values the
 * program gives its Release: name, kind, replicas and the resources of every container, read in the
 * chart templates at the pinned versions (test/addonCapacity.test.ts compares the model with
 * `helm template` of the real charts and tools/admission/operatorPods.ts when OPS_CHART_SOURCES is
 * set). Hook Jobs are included (they run at install and upgrade; counted like the program's own
 * Jobs); the Prometheus and Alertmanager StatefulSets are the ones the Prometheus operator makes
 * from the chart's custom resources. Anything the model does not know is said, never guessed.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { unwrapSecrets } from "../harness/manifests";

/** One helm Release of the render: its inputs as the program registered them. */
export interface AddonRelease {
    release: string;
    namespace: string;
    chart: string;
    version: string;
    values: any;
}

/** The chart versions whose templates the model was read in (and is tested against). */
export const MODELLED_VERSIONS: Record<string, string> = {
    "ingress-nginx": "4.11.3",
    "cert-manager": "v1.16.2",
    reloader: "1.2.0",
    "metrics-server": "3.12.2",
    vpa: "4.7.1",
    "argo-cd": "7.7.11",
    "kube-prometheus-stack": "66.3.1",
};

const HELM_RELEASE = /^kubernetes:helm\.sh\/v3:Release$/;

/** The helm Releases among the render's registered resources (type, inputs). */
export function addonReleases(resources: ReadonlyArray<{ type: string; name: string; inputs: Record<string, unknown> }>): AddonRelease[] {
    return resources.filter((r) => HELM_RELEASE.test(r.type)).map((r) => {
        const i = unwrapSecrets(r.inputs) as any;
        return { release: String(i.name ?? r.name), namespace: String(i.namespace ?? "default"), chart: String(i.chart), version: String(i.version), values: i.values ?? {} };
    });
}

type Resources = { requests?: Record<string, string>; limits?: Record<string, string> };
interface Container { name: string; resources?: Resources; init?: boolean }
interface ModelPod { kind: "Deployment" | "StatefulSet" | "DaemonSet" | "Job"; name: string; replicas: number; containers: Container[] }

const get = (v: any, ...keys: string[]) => keys.reduce((x, k) => (x === undefined || x === null ? undefined : x[k]), v);
const res = (v: unknown): Resources => (v && typeof v === "object" ? (v as Resources) : {});
const count = (v: unknown, fallback = 1) => (v === undefined || v === null ? fallback : Number(v));
/** helm's usual `<chart>.fullname`: fullnameOverride, else the release name when it contains the chart's, else `<release>-<chart>`. */
const fullname = (r: AddonRelease, chart = r.chart, override?: unknown) => (typeof override === "string" && override ? override : r.release.includes(chart) ? r.release : `${r.release}-${chart}`);

/** The pods of one chart as its pinned templates render them with these values; undefined for an unknown chart. */
function chartPods(r: AddonRelease): ModelPod[] | undefined {
    const v = r.values ?? {};
    switch (r.chart) {
        case "ingress-nginx": {
            const fn = fullname(r, r.chart, v.fullnameOverride);
            const c = v.controller ?? {};
            const hooks = get(c, "admissionWebhooks", "enabled") === false ? [] : [
                { kind: "Job" as const, name: `${fn}-admission-create`, replicas: 1, containers: [{ name: "create", resources: res(get(c, "admissionWebhooks", "createSecretJob", "resources")) }] },
                { kind: "Job" as const, name: `${fn}-admission-patch`, replicas: 1, containers: [{ name: "patch", resources: res(get(c, "admissionWebhooks", "patchWebhookJob", "resources")) }] },
            ];
            // The chart's default controller requests (values.yaml of 4.11.3) when the program sets none.
            return [{ kind: c.kind === "DaemonSet" ? "DaemonSet" : "Deployment", name: `${fn}-controller`, replicas: count(c.replicaCount), containers: [{ name: "controller", resources: c.resources ?? { requests: { cpu: "100m", memory: "90Mi" } } }] }, ...hooks];
        }
        case "cert-manager": {
            const fn = fullname(r, r.chart, v.fullnameOverride);
            return [
                { kind: "Deployment", name: fn, replicas: count(v.replicaCount), containers: [{ name: "cert-manager-controller", resources: res(v.resources) }] },
                { kind: "Deployment", name: `${fn}-webhook`, replicas: count(get(v, "webhook", "replicaCount")), containers: [{ name: "cert-manager-webhook", resources: res(get(v, "webhook", "resources")) }] },
                ...(get(v, "cainjector", "enabled") === false ? [] : [{ kind: "Deployment" as const, name: `${fn}-cainjector`, replicas: count(get(v, "cainjector", "replicaCount")), containers: [{ name: "cert-manager-cainjector", resources: res(get(v, "cainjector", "resources")) }] }]),
                ...(get(v, "startupapicheck", "enabled") === false ? [] : [{ kind: "Job" as const, name: `${fn}-startupapicheck`, replicas: 1, containers: [{ name: "cert-manager-startupapicheck", resources: res(get(v, "startupapicheck", "resources")) }] }]),
            ];
        }
        case "reloader": {
            // Its fullname is always `<release>-<chart>` (templates/_helpers.tpl of 1.2.0).
            const d = get(v, "reloader", "deployment") ?? {};
            const name = typeof get(v, "fullnameOverride") === "string" && v.fullnameOverride ? v.fullnameOverride : `${r.release}-${r.chart}`;
            return [{ kind: "Deployment", name, replicas: count(d.replicas), containers: [{ name, resources: res(d.resources) }] }];
        }
        case "metrics-server": {
            const fn = fullname(r, r.chart, v.fullnameOverride);
            // The chart's default requests (values.yaml of 3.12.2) when the program sets none.
            return [{ kind: "Deployment", name: fn, replicas: count(v.replicas), containers: [{ name: "metrics-server", resources: v.resources ?? { requests: { cpu: "100m", memory: "200Mi" } } }] }];
        }
        case "vpa": {
            const fn = fullname(r, r.chart, v.fullnameOverride);
            const part = (key: string, suffix: string): ModelPod[] => get(v, key, "enabled") === false ? [] : [{ kind: "Deployment", name: `${fn}-${suffix}`, replicas: count(get(v, key, "replicaCount")), containers: [{ name: "vpa", resources: res(get(v, key, "resources")) }] }];
            const certGen = get(v, "admissionController", "certGen", "resources");
            const hooks: ModelPod[] = get(v, "admissionController", "enabled") === false || get(v, "admissionController", "certGen", "enabled") === false ? [] : [
                { kind: "Job", name: `${fn}-admission-certgen`, replicas: 1, containers: [{ name: "create", resources: res(certGen) }] },
                { kind: "Job", name: `${fn}-admission-certgen-patch`, replicas: 1, containers: [{ name: "patch", resources: res(certGen) }] },
            ];
            return [...part("admissionController", "admission-controller"), ...part("recommender", "recommender"), ...part("updater", "updater"), ...hooks];
        }
        case "argo-cd": {
            // argo-cd.fullname is `<release>-argocd` unless the release name contains "argocd".
            const fn = typeof v.fullnameOverride === "string" && v.fullnameOverride ? v.fullnameOverride : r.release.includes("argocd") ? r.release : `${r.release}-argocd`;
            const on = (key: string) => get(v, key, "enabled") !== false;
            const dep = (key: string, suffix: string, container: string, replicasKey = "replicas", extra: Container[] = []): ModelPod[] =>
                on(key) ? [{ kind: "Deployment", name: `${fn}-${suffix}`, replicas: count(get(v, key, replicasKey)), containers: [{ name: container, resources: res(get(v, key, "resources")) }, ...extra] }] : [];
            const dexOn = get(v, "dex", "enabled") !== false;
            return [
                { kind: "StatefulSet", name: `${fn}-application-controller`, replicas: count(get(v, "controller", "replicas")), containers: [{ name: "application-controller", resources: res(get(v, "controller", "resources")) }] },
                ...dep("applicationSet", "applicationset-controller", "applicationset-controller"),
                ...dep("notifications", "notifications-controller", "notifications-controller"),
                // The copyutil init container takes repoServer.resources too.
                ...dep("repoServer", "repo-server", "repo-server", "replicas", [{ name: "copyutil", init: true, resources: res(get(v, "repoServer", "resources")) }]),
                ...dep("server", "server", "server"),
                ...dep("redis", "redis", "redis", "replicas"),
                ...(dexOn ? dep("dex", "dex-server", "dex-server") : []),
                ...(on("redisSecretInit") ? [{ kind: "Job" as const, name: `${fn}-redis-secret-init`, replicas: 1, containers: [{ name: "secret-init", resources: res(get(v, "redisSecretInit", "resources")) }] }] : []),
            ];
        }
        case "kube-prometheus-stack": {
            const fn = fullname(r, r.chart, v.fullnameOverride);
            const op = v.prometheusOperator ?? {};
            const reloader = res(get(op, "prometheusConfigReloader", "resources"));
            const operated = (kind: "prometheus" | "alertmanager", spec: any): ModelPod => ({
                kind: "StatefulSet", name: `${kind}-${fn}-${kind}`, replicas: count(spec?.replicas),
                containers: [{ name: kind, resources: res(spec?.resources) }, { name: "config-reloader", resources: reloader }, { name: "init-config-reloader", init: true, resources: reloader }],
            });
            const hooks: ModelPod[] = get(op, "admissionWebhooks", "enabled") === false || get(op, "admissionWebhooks", "patch", "enabled") === false ? [] : [
                { kind: "Job", name: `${fn}-admission-create`, replicas: 1, containers: [{ name: "create", resources: res(get(op, "admissionWebhooks", "patch", "resources")) }] },
                { kind: "Job", name: `${fn}-admission-patch`, replicas: 1, containers: [{ name: "patch", resources: res(get(op, "admissionWebhooks", "patch", "resources")) }] },
            ];
            const sub = (key: string) => get(v, key) ?? {};
            return [
                { kind: "Deployment", name: `${fn}-operator`, replicas: 1, containers: [{ name: r.chart, resources: res(op.resources) }] },
                ...hooks,
                ...(get(v, "kubeStateMetrics", "enabled") === false ? [] : [{ kind: "Deployment" as const, name: `${r.release}-kube-state-metrics`, replicas: count(sub("kube-state-metrics").replicas), containers: [{ name: "kube-state-metrics", resources: res(sub("kube-state-metrics").resources) }] }]),
                ...(get(v, "nodeExporter", "enabled") === false ? [] : [{ kind: "DaemonSet" as const, name: `${r.release}-prometheus-node-exporter`, replicas: 1, containers: [{ name: "node-exporter", resources: res(sub("prometheus-node-exporter").resources) }] }]),
                ...(get(v, "prometheus", "enabled") === false ? [] : [operated("prometheus", get(v, "prometheus", "prometheusSpec"))]),
                ...(get(v, "alertmanager", "enabled") === false ? [] : [operated("alertmanager", get(v, "alertmanager", "alertmanagerSpec"))]),
            ];
        }
        default:
            return undefined;
    }
}

export interface AddonModel {
    /** The workloads of each Release's pods, as objects the explain modules read (kind, replicas, pod template). */
    objects: K8sObject[];
    /** Per Release: which chart, and the workloads counted. */
    charts: Array<{ release: string; namespace: string; chart: string; version: string; workloads: string[] }>;
    notes: string[];
}

/** The modelled pod-running objects of every Release (unknown charts and unmodelled versions are noted). */
export function addonModel(releases: AddonRelease[]): AddonModel {
    const objects: K8sObject[] = [];
    const charts: AddonModel["charts"] = [];
    const notes: string[] = [];
    for (const r of releases) {
        const pods = chartPods(r);
        if (!pods) {
            notes.push(`add-on ${r.chart} ${r.version} (release ${r.namespace}/${r.release}): no pod model for this chart; its pods are not counted in the capacity`);
            continue;
        }
        if (MODELLED_VERSIONS[r.chart] !== r.version) notes.push(`add-on ${r.chart} ${r.version}: its pods are counted as chart ${MODELLED_VERSIONS[r.chart]} renders them (the version the model was read in)`);
        const labels = { "app.kubernetes.io/instance": r.release, "app.kubernetes.io/name": r.chart };
        for (const p of pods) {
            const strip = (c: Container) => ({ name: c.name, resources: c.resources ?? {} });
            const template = { metadata: { labels: { ...labels, "explain/addon-workload": p.name } }, spec: { containers: p.containers.filter((c) => !c.init).map(strip), initContainers: p.containers.filter((c) => c.init).map(strip) } };
            objects.push({
                apiVersion: p.kind === "Job" ? "batch/v1" : "apps/v1",
                kind: p.kind,
                metadata: { name: p.name, namespace: r.namespace, labels },
                spec: p.kind === "Job" ? { parallelism: p.replicas, template } : p.kind === "DaemonSet" ? { template } : { replicas: p.replicas, template },
            } as K8sObject);
        }
        charts.push({ release: r.release, namespace: r.namespace, chart: r.chart, version: r.version, workloads: pods.map((p) => `${r.namespace}/${p.name}`) });
    }
    return { objects, charts, notes };
}
