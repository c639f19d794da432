/**
 * Data volumes: each StatefulSet's claim templates, their claims and what a bigger size does
 * (components/lib/claimGrowth.ts), and between two renders what a size change will do. The same
 * sentences are printed by `npm run explain` (one stack) and `npm run diff` (base against head),
 * and they name what `pulumi preview` shows for the change: the StatefulSet replaced (delete
 * before replace, its pods orphaned and adopted) and one PersistentVolumeClaimPatch updated per
 * claim; a shrink, or a growth on a class without volume expansion, is refused by the program itself
 * in that preview, with the same config key and sizes (components/lib/claimGuard.ts), and so is a
 * StatefulSet that moves to another namespace or goes. The stack's own claims (PersistentVolumeClaim
 * objects: a pulumi resource each) are compared too: a shrink the API server refuses, a growth in
 * place, and a new class, access mode or namespace, which the provider makes by deleting the claim
 * with its data.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { CLAIM_SIZES_ANNOTATION, CLAIM_SIZE_KEYS_ANNOTATION, ORPHAN_ANNOTATION } from "../../components/lib/claimAnnotations";
import { bytes } from "./quantity";
import type { Workload } from "./workloads";

export interface ClaimTemplateVolume {
    /** The StatefulSet, `<namespace>/<name>`. */
    workload: string;
    template: string;
    size: string;
    /** Undefined: the cluster's default StorageClass. */
    storageClass?: string;
    /** `<template>-<statefulset>-<ordinal>` for the configured replicas. */
    claims: string[];
    /** The config key of the size (the StatefulSet's `ops/volume-claim-size-keys`). */
    configKey?: string;
    /** Made to grow: the orphan deletion policy and the size annotation are on the StatefulSet. */
    growable: boolean;
    /** A HorizontalPodAutoscaler scales the StatefulSet: the program does not patch its claims. */
    autoscaled: boolean;
    /** What a bigger size in the configuration does. */
    onGrowth: string;
}

/** A claim the stack creates itself (a PersistentVolumeClaim object). */
export interface PlainClaim {
    /** `<namespace>/<name>`. */
    claim: string;
    size: string;
    storageClass?: string;
    accessModes: string[];
}

export interface VolumeReport {
    volumes: ClaimTemplateVolume[];
    claims: PlainClaim[];
    /** The namespaces the render declares (Namespace objects). */
    namespaces: string[];
}

const classText = (c?: string) => (c ? `StorageClass ${c}` : "the cluster's default StorageClass");

function pairs(value: unknown): Map<string, string> {
    const out = new Map<string, string>();
    for (const part of typeof value === "string" ? value.split(",") : []) {
        const i = part.indexOf("=");
        if (i > 0) out.set(part.slice(0, i), part.slice(i + 1));
    }
    return out;
}

const RECREATED = "the StatefulSet is re-created around its running pods (deleted first with propagation orphan: the pods are orphaned, not deleted, and the new StatefulSet adopts them)";

export function growthText(v: Pick<ClaimTemplateVolume, "claims" | "storageClass" | "autoscaled">): string {
    if (v.autoscaled) return `${RECREATED}; its existing claims keep their size and only claims made afterwards get the new one: a HorizontalPodAutoscaler owns its replica count, so the program does not know which claims exist and patches none (expand each by hand where ${classText(v.storageClass)} allows volume expansion)`;
    return `each claim (${v.claims.join(", ") || "none"}) is expanded in place by a PersistentVolumeClaimPatch where ${classText(v.storageClass)} allows volume expansion (without allowVolumeExpansion the program refuses the growth in the preview, before anything changes: it reads each claim's StorageClass); ${RECREATED}`;
}

const NOT_GROWABLE = "not supported: the StatefulSet lacks the orphan deletion policy and the size annotation of components/lib/claimGrowth.ts, so `pulumi preview` fails on its replacement with provider 4.25.0 (pulumi-kubernetes#4328) and its claims would keep their size";

export function volumes(objects: K8sObject[], workloads: Workload[]): VolumeReport {
    const out: ClaimTemplateVolume[] = [];
    const scaled = new Set(objects.filter((o) => o.kind === "HorizontalPodAutoscaler" && o.spec?.scaleTargetRef?.kind === "StatefulSet").map((o) => `${o.metadata?.namespace ?? "default"}/${o.spec.scaleTargetRef.name}`));
    for (const w of workloads.filter((x) => x.kind === "StatefulSet")) {
        const annotations: Record<string, string> = w.object.metadata?.annotations ?? {};
        const growable = annotations[ORPHAN_ANNOTATION] === "orphan" && CLAIM_SIZES_ANNOTATION in annotations;
        const keys = pairs(annotations[CLAIM_SIZE_KEYS_ANNOTATION]);
        for (const t of (w.object.spec?.volumeClaimTemplates ?? []) as K8sObject[]) {
            const template = String(t.metadata?.name ?? "");
            const claims = Array.from({ length: w.replicas }, (_, i) => `${template}-${w.name}-${i}`);
            const storageClass: string | undefined = t.spec?.storageClassName ?? undefined;
            const v = { workload: `${w.namespace}/${w.name}`, template, size: String(t.spec?.resources?.requests?.storage ?? ""), storageClass, claims, configKey: keys.get(template), growable, autoscaled: scaled.has(`${w.namespace}/${w.name}`) };
            out.push({ ...v, onGrowth: growable ? growthText(v) : NOT_GROWABLE });
        }
    }
    const claims = objects
        .filter((o) => o.kind === "PersistentVolumeClaim" && (o.apiVersion ?? "v1") === "v1")
        .map((o): PlainClaim => ({ claim: `${o.metadata?.namespace ?? "default"}/${o.metadata?.name}`, size: String(o.spec?.resources?.requests?.storage ?? ""), storageClass: o.spec?.storageClassName ?? undefined, accessModes: [...(o.spec?.accessModes ?? [])] }))
        .sort((a, b) => (a.claim < b.claim ? -1 : a.claim > b.claim ? 1 : 0));
    const namespaces = objects.filter((o) => o.kind === "Namespace").map((o) => String(o.metadata?.name)).sort();
    return { volumes: out, claims, namespaces };
}

export interface VolumeChange {
    workload: string;
    template: string;
    from: string;
    to: string;
    configKey?: string;
    /** True: the change cannot be made (shrink, class change, not growable); the preview fails. */
    refused: boolean;
    text: string;
}

/** Two sizes that are the same quantity written alike or not; undefined when either is not a quantity. */
function compare(from: string, to: string): number | undefined {
    try {
        const [a, b] = [bytes(from), bytes(to)];
        return a === undefined || b === undefined ? undefined : Math.sign(b - a);
    } catch {
        return undefined;
    }
}

const SAME_SIZE = "the same size written another way: the program keeps the deployed spelling (components/lib/claimGuard.ts), so nothing changes";

/** What each changed claim template of a StatefulSet in both renders will do, and each StatefulSet of the base that moves or goes. */
export function volumeChanges(base: VolumeReport, head: VolumeReport): VolumeChange[] {
    const before = new Map(base.volumes.map((v) => [`${v.workload}\u0000${v.template}`, v]));
    const out: VolumeChange[] = [];
    for (const v of head.volumes) {
        const was = before.get(`${v.workload}\u0000${v.template}`);
        if (!was || (was.size === v.size && was.storageClass === v.storageClass)) continue;
        const key = v.configKey ? ` (config key ${v.configKey})` : "";
        const head = `${v.workload}: volume ${v.template} ${was.size} → ${v.size}${key}`;
        const change = { workload: v.workload, template: v.template, from: was.size, to: v.size, configKey: v.configKey };
        if (was.storageClass !== v.storageClass) {
            out.push({ ...change, refused: true, text: `refused: ${v.workload}: volume ${v.template} moves from ${classText(was.storageClass)} to ${classText(v.storageClass)}: a bound claim keeps its class (spec.storageClassName is immutable); the data needs migrating to new claims instead` });
            continue;
        }
        const order = compare(was.size, v.size) ?? 0;
        if (order === 0 && v.growable) out.push({ ...change, refused: false, text: `no change: ${head}: ${SAME_SIZE}` });
        else if (order < 0) out.push({ ...change, refused: true, text: `refused: ${head}: a claim cannot shrink; the program refuses it in the preview against the last deploy's sizes, before anything changes; set ${v.configKey ?? "the size"} back to ${was.size} or more` });
        else if (!v.growable) out.push({ ...change, refused: true, text: `refused: ${head}: ${NOT_GROWABLE}` });
        else out.push({ ...change, refused: false, text: `${head}: ${growthText(v)}` });
    }
    out.push(...goneStatefulSets(base, head), ...claimChanges(base, head));
    return out;
}

/** Each growable StatefulSet of the base that the head no longer declares: the volume guard refuses it unless released. */
function goneStatefulSets(base: VolumeReport, head: VolumeReport): VolumeChange[] {
    const now = new Set(head.volumes.map((v) => v.workload));
    const out: VolumeChange[] = [];
    for (const workload of [...new Set(base.volumes.filter((v) => v.growable).map((v) => v.workload))]) {
        if (now.has(workload)) continue;
        const [namespace, name] = workload.split("/");
        const moved = [...now].find((w) => w.endsWith(`/${name}`));
        const claims = base.volumes.filter((v) => v.workload === workload).flatMap((v) => v.claims);
        const where = head.namespaces.length && !head.namespaces.includes(namespace)
            ? `its claims (${claims.join(", ") || "none"}) would be deleted with the namespace ${namespace}, which the stack no longer declares`
            : `its claims (${claims.join(", ") || "none"}) stay in ${namespace}, unused`;
        out.push({
            workload,
            template: "*",
            from: workload,
            to: moved ?? "(none)",
            refused: true,
            text: `refused: ${workload}: ${moved ? `moves to ${moved}, where it starts with empty volumes` : "is no longer declared"}: ${where}; the program refuses it in the preview unless volumesReleased lists ${workload} (after a backup)`,
        });
    }
    return out;
}

/** The stack's own claims: a shrink, a growth, a replacement (class, access modes, namespace) or a removal. */
function claimChanges(base: VolumeReport, head: VolumeReport): VolumeChange[] {
    const now = new Map(head.claims.map((c) => [c.claim, c]));
    const out: VolumeChange[] = [];
    const LOST = "pulumi deletes the claim, and the data on it, and creates it again empty (a protected claim, as in prod, fails the preview instead)";
    for (const was of base.claims) {
        const c = now.get(was.claim);
        const change = { workload: was.claim, template: "", from: was.size, to: c?.size ?? "(none)", refused: true };
        if (!c) {
            const name = was.claim.split("/")[1];
            const moved = head.claims.find((x) => x.claim.endsWith(`/${name}`) && !base.claims.some((b) => b.claim === x.claim));
            out.push({ ...change, text: moved ? `refused: claim ${was.claim} moves to ${moved.claim}: ${LOST.replace("creates it again empty", `creates ${moved.claim} empty`)}` : `refused: claim ${was.claim} is no longer declared: pulumi deletes it and the data on it (unless it is protected or retained on delete)` });
            continue;
        }
        if (c.storageClass !== was.storageClass || c.accessModes.join(",") !== was.accessModes.join(",")) {
            const what = c.storageClass !== was.storageClass ? `${classText(was.storageClass)} → ${classText(c.storageClass)}` : `access modes ${was.accessModes.join(", ")} → ${c.accessModes.join(", ")}`;
            out.push({ ...change, text: `refused: claim ${was.claim}: ${what}: the claim's class and access modes are immutable, so ${LOST}` });
            continue;
        }
        if (c.size === was.size) continue;
        const order = compare(was.size, c.size);
        if (order === 0) out.push({ ...change, refused: false, text: `no change: claim ${was.claim}: ${was.size} → ${c.size} is the same size written another way` });
        else if (order !== undefined && order < 0) out.push({ ...change, text: `refused: claim ${was.claim}: ${was.size} → ${c.size}: a claim cannot shrink; the API server refuses it in the preview (spec.resources.requests.storage: field can not be less than status.capacity)` });
        else out.push({ ...change, refused: false, text: `claim ${was.claim}: ${was.size} → ${c.size}: expanded in place where ${classText(c.storageClass)} allows volume expansion; without allowVolumeExpansion the API server refuses the expansion at \`pulumi up\` (the preview does not show it)` });
    }
    return out;
}
