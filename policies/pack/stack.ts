/**
 * A stack as the specification's rules read it: its Kubernetes objects (with the URN to report
 * against) and its other resources (Helm charts), with the lookups the rules share.
 */
import { k8sObjectFromPulumi } from "../gatekeeper/engine";
import type { K8sObject } from "../gatekeeper/types";
import { plainProps, type PackResource } from "./resources";

export interface StackObject {
    urn: string;
    object: K8sObject;
}

export interface StackView {
    /** Every resource of the stack, props as plain data. */
    resources: PackResource[];
    /** The Kubernetes objects among them. */
    objects: StackObject[];
    /** Objects of a kind (and API group, "" for core, when given). */
    ofKind(kind: string, group?: string): StackObject[];
    /** The object of a kind with a name in a namespace. */
    find(kind: string, namespace: string | undefined, name: string): StackObject | undefined;
    /** Namespaced objects without metadata.namespace count as in `default`, as the provider places them. */
    namespaceOf(obj: K8sObject): string;
}

export function stackView(resources: readonly PackResource[]): StackView {
    const plain = resources.map((r) => ({ type: r.type, urn: r.urn, name: r.name, props: plainProps(r.props) }));
    const objects: StackObject[] = [];
    for (const r of plain) {
        const object = k8sObjectFromPulumi(r.type, r.props);
        if (object?.kind) objects.push({ urn: r.urn, object });
    }
    const byKind = new Map<string, StackObject[]>();
    for (const o of objects) {
        const list = byKind.get(o.object.kind!) ?? [];
        list.push(o);
        byKind.set(o.object.kind!, list);
    }
    const namespaceOf = (obj: K8sObject) => obj.metadata?.namespace || "default";
    return {
        resources: plain,
        objects,
        ofKind(kind, group) {
            const list = byKind.get(kind) ?? [];
            return group === undefined ? list : list.filter((o) => groupOf(o.object) === group);
        },
        find(kind, namespace, name) {
            return (byKind.get(kind) ?? []).find(
                (o) => o.object.metadata?.name === name && (namespace === undefined || namespaceOf(o.object) === namespace),
            );
        },
        namespaceOf,
    };
}

export function groupOf(obj: K8sObject): string {
    const apiVersion = obj.apiVersion ?? "";
    return apiVersion.includes("/") ? apiVersion.split("/")[0] : "";
}

/** Workload kinds and where they keep their pod template. */
const TEMPLATE_PATHS: Record<string, string[]> = {
    Deployment: ["spec", "template"],
    StatefulSet: ["spec", "template"],
    DaemonSet: ["spec", "template"],
    ReplicaSet: ["spec", "template"],
    ReplicationController: ["spec", "template"],
    Job: ["spec", "template"],
    CronJob: ["spec", "jobTemplate", "spec", "template"],
};

export const WORKLOAD_KINDS: ReadonlySet<string> = new Set(Object.keys(TEMPLATE_PATHS));

export interface PodTemplate {
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    spec?: any;
}

/** The pod template of a workload, or the Pod itself; undefined for other kinds. */
export function podTemplateOf(obj: K8sObject): PodTemplate | undefined {
    if (obj.kind === "Pod") return { metadata: obj.metadata, spec: obj.spec };
    const path = obj.kind ? TEMPLATE_PATHS[obj.kind] : undefined;
    if (!path) return undefined;
    let cur: any = obj;
    for (const key of path) cur = cur?.[key];
    return cur && typeof cur === "object" ? cur : undefined;
}

/** Objects of the stack that run pods: workloads and Pods. */
export function podOwners(stack: StackView): StackObject[] {
    return stack.objects.filter((o) => o.object.kind === "Pod" || WORKLOAD_KINDS.has(o.object.kind ?? ""));
}

export interface ContainerRef {
    container: any;
    init: boolean;
}

/** Init containers then containers of a pod template. */
export function containersOf(template: PodTemplate | undefined): ContainerRef[] {
    const spec = template?.spec ?? {};
    const list = (v: unknown) => (Array.isArray(v) ? v : []);
    return [
        ...list(spec.initContainers).map((container) => ({ container, init: true })),
        ...list(spec.containers).map((container) => ({ container, init: false })),
    ];
}

/** True when every key/value of the selector is among the labels (an empty selector selects nothing here). */
export function selects(selector: Record<string, string> | undefined, labels: Record<string, string> | undefined): boolean {
    const entries = Object.entries(selector ?? {});
    return entries.length > 0 && entries.every(([k, v]) => labels?.[k] === v);
}

export function describe(obj: K8sObject): string {
    const ns = obj.metadata?.namespace;
    return `${obj.kind} ${ns ? ns + "/" : ""}${obj.metadata?.name ?? "(unnamed)"}`;
}
