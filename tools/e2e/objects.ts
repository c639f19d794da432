/**
 * The e2e's logic on Kubernetes objects, kept pure so it is tested offline (objects.test.ts):
 * CustomResourceDefinitions from the pinned CRD schemas, the stand-ins for what the ci stack's
 * add-ons would bring (storage, a fake node), and the comparison of the cluster with the render.
 */
import * as YAML from "yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";

export type { K8sObject };

/** API groups served by kube-apiserver itself (no CRD needed). */
const BUILT_IN = /^(|apps|batch|autoscaling|policy|networking\.k8s\.io|rbac\.authorization\.k8s\.io|storage\.k8s\.io|scheduling\.k8s\.io|coordination\.k8s\.io|discovery\.k8s\.io|admissionregistration\.k8s\.io|apiextensions\.k8s\.io|node\.k8s\.io)$/;

export function parseManifests(text: string): K8sObject[] {
    return YAML.parseAllDocuments(text).map((d) => d.toJS() as K8sObject).filter((o) => o && typeof o === "object");
}

export function groupOf(apiVersion: string): string {
    return apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
}

/** "Kind namespace/name" (cluster-scoped: "Kind name"), the identity used in every report. */
export function identity(o: K8sObject): string {
    const m = o.metadata ?? {};
    return `${o.kind} ${m.namespace ? `${m.namespace}/` : ""}${m.name}`;
}

/** One kind of the pinned CRD schema file (shared/reference/k8s-schemas/crds-*.json.gz). */
export interface CrdSchema {
    namespaced: boolean;
    schema: Record<string, unknown>;
    deprecated?: boolean;
}

/** The schema file: {set, kinds: {"<group>/<version>/<Kind>": CrdSchema}}. */
export interface CrdSchemaFile {
    set: string;
    kinds: Record<string, CrdSchema>;
}

/** The plural resource name of a kind: every kind of the pinned CRDs takes a plain "s". */
export function plural(kind: string): string {
    if (/(s|x|z|ch|sh|y)$/i.test(kind)) throw new Error(`no plural rule for kind ${kind}: add it to tools/e2e/objects.ts`);
    return `${kind.toLowerCase()}s`;
}

/**
 * The schema as a CRD carries it: without the keys the extractor of shared/reference added
 * (`x-deprecated`, kept from the descriptions it dropped), which apiextensions refuses.
 */
export function crdSchema(schema: unknown): unknown {
    if (Array.isArray(schema)) return schema.map(crdSchema);
    if (!schema || typeof schema !== "object") return schema;
    return Object.fromEntries(Object.entries(schema).filter(([k]) => k !== "x-deprecated").map(([k, v]) => [k, k === "properties" ? Object.fromEntries(Object.entries(v as object).map(([p, s]) => [p, crdSchema(s)])) : crdSchema(v)]));
}

/** Version order of Kubernetes: v1 > v1beta2 > v1beta1 > v1alpha1. */
function versionRank(v: string): number[] {
    const m = /^v(\d+)(?:(alpha|beta)(\d+))?$/.exec(v);
    if (!m) throw new Error(`not a Kubernetes API version: ${v}`);
    return [Number(m[1]), m[2] === undefined ? 3 : m[2] === "beta" ? 2 : 1, Number(m[3] ?? 0)];
}

function newer(a: string, b: string): boolean {
    const [x, y] = [versionRank(a), versionRank(b)];
    for (let i = 0; i < 3; i++) if (x[i] !== y[i]) return x[i] > y[i];
    return false;
}

/**
 * The CustomResourceDefinitions for every non-built-in group the objects use: one CRD per kind,
 * with every version the schema file has (served; the newest stored). A group or kind the file
 * lacks is an error naming it.
 */
export function crdsFor(objects: K8sObject[], file: CrdSchemaFile, source: string): K8sObject[] {
    const used = new Map<string, string>(); // "<group>/<Kind>" -> apiVersion seen first
    for (const o of objects) {
        const group = groupOf(String(o.apiVersion));
        if (BUILT_IN.test(group) || o.kind === "KubeletConfiguration") continue;
        if (!used.has(`${group}/${o.kind}`)) used.set(`${group}/${o.kind}`, String(o.apiVersion));
    }
    const crds: K8sObject[] = [];
    for (const [gk, apiVersion] of [...used].sort()) {
        const [group, kind] = [gk.slice(0, gk.lastIndexOf("/")), gk.slice(gk.lastIndexOf("/") + 1)];
        const versions = Object.entries(file.kinds)
            .filter(([k]) => k.startsWith(`${group}/`) && k.endsWith(`/${kind}`) && k.split("/").length === 3)
            .map(([k, v]) => ({ name: k.split("/")[1], ...v }));
        if (!versions.some((v) => `${group}/${v.name}` === apiVersion)) {
            throw new Error(`${source} has no schema for ${apiVersion} ${kind}, which the render uses`);
        }
        const storage = versions.reduce((a, b) => (newer(b.name, a.name) ? b : a)).name;
        const namespaced = versions[0].namespaced;
        crds.push({
            apiVersion: "apiextensions.k8s.io/v1",
            kind: "CustomResourceDefinition",
            metadata: {
                name: `${plural(kind)}.${group}`,
                labels: { "app.kubernetes.io/managed-by": "ops-e2e" },
                annotations: { "ops-e2e/source": `${source} (set ${file.set})` },
            },
            spec: {
                group,
                names: { kind, listKind: `${kind}List`, plural: plural(kind), singular: kind.toLowerCase() },
                scope: namespaced ? "Namespaced" : "Cluster",
                versions: versions
                    .sort((a, b) => (newer(a.name, b.name) ? -1 : 1))
                    .map((v) => ({
                        name: v.name,
                        served: true,
                        storage: v.name === storage,
                        ...(v.deprecated ? { deprecated: true } : {}),
                        schema: { openAPIV3Schema: crdSchema(v.schema) },
                    })),
            },
        });
    }
    return crds;
}

/** Resource quantity in base units ("500m" -> 0.5, "1Gi" -> 1073741824); undefined if not one. */
export function quantity(v: unknown): number | undefined {
    if (typeof v === "number") return v;
    if (typeof v !== "string") return undefined;
    const m = /^([+-]?\d+(?:\.\d+)?)(m|k|M|G|T|P|E|Ki|Mi|Gi|Ti|Pi|Ei|e\d+)?$/.exec(v);
    if (!m) return undefined;
    const unit = m[2] ?? "";
    const mult: Record<string, number> = {
        "": 1, m: 1e-3, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18,
        Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60,
    };
    return Number(m[1]) * (unit.startsWith("e") ? 10 ** Number(unit.slice(1)) : mult[unit]);
}

/**
 * The cluster's default StorageClass of the stand-in volumes: no provisioner (the volumes are
 * pre-bound), volume expansion allowed, so the API server accepts a bigger claim (admission
 * PersistentVolumeClaimResize) and the volume-growth step can grow one. A claim without a class
 * gets this one (admission DefaultStorageClass), and so does its stand-in volume. The hostPath
 * volumes themselves cannot grow: kube-controller-manager's expand controller finds no expandable
 * plugin, so a grown claim's status.capacity stays at the old size (docs/e2e.md).
 */
export const STAND_IN_CLASS = "e2e-standin";

export function standInStorageClass(): K8sObject {
    return {
        apiVersion: "storage.k8s.io/v1",
        kind: "StorageClass",
        metadata: { name: STAND_IN_CLASS, labels: { "app.kubernetes.io/managed-by": "ops-e2e" }, annotations: { "storageclass.kubernetes.io/is-default-class": "true" } },
        provisioner: "kubernetes.io/no-provisioner",
        reclaimPolicy: "Retain",
        volumeBindingMode: "Immediate",
        allowVolumeExpansion: true,
    };
}

/**
 * Stand-in storage for a cluster without a volume provisioner: one hostPath PersistentVolume
 * pre-bound (claimRef) to each claim of the objects: PersistentVolumeClaims and the claims
 * StatefulSets make from their volumeClaimTemplates (<template>-<set>-<ordinal>); of the claim's
 * class, or the stand-in default class.
 */
export function standInVolumes(objects: K8sObject[], dir: string): K8sObject[] {
    const claims: { namespace: string; name: string; spec: Record<string, any> }[] = [];
    for (const o of objects) {
        if (o.kind === "PersistentVolumeClaim") claims.push({ namespace: o.metadata!.namespace!, name: o.metadata!.name!, spec: o.spec });
        if (o.kind === "StatefulSet") {
            for (const t of o.spec.volumeClaimTemplates ?? []) {
                for (let i = 0; i < (o.spec.replicas ?? 1); i++) {
                    claims.push({ namespace: o.metadata!.namespace!, name: `${t.metadata.name}-${o.metadata!.name}-${i}`, spec: t.spec });
                }
            }
        }
    }
    return claims.map((c) => {
        const size = c.spec.resources?.requests?.storage;
        if (!size) throw new Error(`claim ${c.namespace}/${c.name} requests no storage`);
        return {
            apiVersion: "v1",
            kind: "PersistentVolume",
            metadata: { name: `e2e-${c.namespace}-${c.name}`.slice(0, 253), labels: { "app.kubernetes.io/managed-by": "ops-e2e", "ops-e2e/stand-in": "storage" } },
            spec: {
                capacity: { storage: size },
                accessModes: c.spec.accessModes ?? ["ReadWriteOnce"],
                storageClassName: c.spec.storageClassName ?? STAND_IN_CLASS,
                persistentVolumeReclaimPolicy: "Retain",
                hostPath: { path: `${dir}/${c.namespace}/${c.name}`, type: "DirectoryOrCreate" },
                claimRef: { namespace: c.namespace, name: c.name },
            },
        };
    });
}

/** What a node offers: capacity, less the reservations and the hard-eviction memory of its kubelet. */
export function fakeNode(name: string, capacity: { cpu: string; memory: string; pods: string; ephemeralStorage: string }, kubelet: Record<string, any>): K8sObject {
    const reserved = (res: string) => ["systemReserved", "kubeReserved"].reduce((n, k) => n + (quantity(kubelet[k]?.[res] ?? "0") ?? NaN), 0);
    const evictMem = quantity(kubelet.evictionHard?.["memory.available"] ?? "0");
    if (evictMem === undefined) throw new Error(`evictionHard memory.available must be a quantity for the fake node, got ${kubelet.evictionHard?.["memory.available"]}`);
    const cpu = Math.round((quantity(capacity.cpu)! - reserved("cpu")) * 1000);
    const memory = Math.floor((quantity(capacity.memory)! - reserved("memory") - evictMem) / 2 ** 20);
    const disk = quantity(capacity.ephemeralStorage)!;
    const nodefs = String(kubelet.evictionHard?.["nodefs.available"] ?? "0");
    const evictDisk = nodefs.endsWith("%") ? (disk * Number(nodefs.slice(0, -1))) / 100 : quantity(nodefs);
    if (evictDisk === undefined || Number.isNaN(evictDisk)) throw new Error(`evictionHard nodefs.available must be a quantity or a percentage, got ${nodefs}`);
    const storage = Math.floor((disk - reserved("ephemeral-storage") - evictDisk) / 2 ** 20);
    if (!(cpu > 0 && memory > 0 && storage > 0)) throw new Error(`node ${name}: the kubelet reserves more than its capacity`);
    return {
        apiVersion: "v1",
        kind: "Node",
        metadata: {
            name,
            annotations: { "kwok.x-k8s.io/node": "fake", "node.alpha.kubernetes.io/ttl": "0" },
            labels: { "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64", type: "kwok", "app.kubernetes.io/managed-by": "ops-e2e" },
        },
        status: {
            capacity: { cpu: capacity.cpu, memory: capacity.memory, pods: capacity.pods, "ephemeral-storage": capacity.ephemeralStorage },
            allocatable: { cpu: `${cpu}m`, memory: `${memory}Mi`, pods: capacity.pods, "ephemeral-storage": `${storage}Mi` },
        },
    };
}

const b64 = (s: string) => Buffer.from(s, "base64").toString("utf8");

/**
 * Differences between what the render asked for and what the API server holds: every field the
 * render sets must be on the live object with the same value (quantities compared by amount,
 * a Secret's stringData against the decoded data); fields the server adds are ignored.
 */
export function differences(want: unknown, live: unknown, path = ""): string[] {
    if (want === null || want === undefined) return [];
    // The API server drops zero values of omitempty fields (false, 0, "", [], {}): absent there
    // means the same as rendered.
    if (live === undefined && isZero(want)) return [];
    const wq = quantity(want), lq = quantity(live);
    if (typeof want !== "object") {
        if (want === live || (wq !== undefined && lq !== undefined && Math.abs(wq - lq) <= Math.abs(wq) * 1e-9)) return [];
        return [`${path}: rendered ${JSON.stringify(want)}, cluster has ${JSON.stringify(live)}`];
    }
    if (Array.isArray(want)) {
        if (!Array.isArray(live)) return [`${path}: rendered a list, cluster has ${JSON.stringify(live)}`];
        if (want.length !== live.length) return [`${path}: rendered ${want.length} items, cluster has ${live.length}`];
        return want.flatMap((w, i) => differences(w, live[i], `${path}[${i}]`));
    }
    if (!live || typeof live !== "object" || Array.isArray(live)) return [`${path}: rendered an object, cluster has ${JSON.stringify(live)}`];
    return Object.entries(want as Record<string, unknown>).flatMap(([k, w]) => differences(w, (live as Record<string, unknown>)[k], `${path}.${k}`));
}

function isZero(v: unknown): boolean {
    if (Array.isArray(v)) return v.length === 0;
    if (v && typeof v === "object") return Object.keys(v).length === 0;
    return v === false || v === 0 || v === "";
}

export function objectDifferences(want: K8sObject, live: K8sObject): string[] {
    const { metadata, status: _status, stringData, ...rest } = want;
    const out = differences({ name: metadata?.name, namespace: metadata?.namespace, labels: metadata?.labels, annotations: metadata?.annotations }, live.metadata, ".metadata");
    out.push(...differences(rest, live));
    if (stringData) {
        const decoded = Object.fromEntries(Object.entries(live.data ?? {}).map(([k, v]) => [k, b64(String(v))]));
        out.push(...differences(stringData, decoded, ".stringData"));
    }
    return out;
}

const key = (o: K8sObject) => `${o.apiVersion}|${o.kind}|${o.metadata?.namespace ?? ""}|${o.metadata?.name}`;

/**
 * The render against the cluster: objects missing, objects that differ, and objects of the stack
 * (by the given label) that the render does not have. Objects a controller made (with an owner)
 * (with an owner, or a StatefulSet's claims) and a helm release's objects are not the stack's.
 */
export function compareWithCluster(rendered: K8sObject[], live: K8sObject[], stackLabel: [string, string]): { missing: string[]; differing: string[]; extra: string[] } {
    const byKey = new Map(live.map((o) => [key(o), o]));
    const renderedKeys = new Set(rendered.map(key));
    const missing: string[] = [];
    const differing: string[] = [];
    for (const o of rendered) {
        const l = byKey.get(key(o));
        if (!l) { missing.push(identity(o)); continue; }
        for (const d of objectDifferences(o, l)) differing.push(`${identity(o)} ${d}`);
    }
    // The claims StatefulSets make from their templates carry the template's labels, no owner.
    const claimOf = new RegExp(`^(${rendered.filter((o) => o.kind === "StatefulSet").flatMap((o) =>
        (o.spec?.volumeClaimTemplates ?? []).map((t: K8sObject) => `${o.metadata!.namespace}/${t.metadata!.name}-${o.metadata!.name}`.replace(/[.]/g, "\\.")),
    ).join("|") || "(?!)"})-\\d+$`);
    // An add-on chart's objects belong to its helm release (the real charts: per-chart lines of tools/e2e/steps/addons.ts).
    const madeByController = (o: K8sObject) =>
        Boolean((o.metadata?.ownerReferences as unknown[] | undefined)?.length) || Boolean(o.metadata?.annotations?.["meta.helm.sh/release-name"]) ||
        (o.kind === "PersistentVolumeClaim" && claimOf.test(`${o.metadata?.namespace}/${o.metadata?.name}`));
    const extra = live
        .filter((o) => o.metadata?.labels?.[stackLabel[0]] === stackLabel[1] && !madeByController(o) && !renderedKeys.has(key(o)))
        .map(identity);
    return { missing, differing, extra };
}
