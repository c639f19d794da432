import type { K8sObject } from "../types";
import { parseApiVersion } from "./gvk";

/** Where each workload kind keeps its pod template, keyed "group/Kind" (Gatekeeper's expand-deployments/expand-cronjobs). */
const POD_TEMPLATE_SOURCES: ReadonlyMap<string, readonly string[]> = new Map([
    ["apps/Deployment", ["spec", "template"]],
    ["apps/StatefulSet", ["spec", "template"]],
    ["apps/DaemonSet", ["spec", "template"]],
    ["apps/ReplicaSet", ["spec", "template"]],
    ["extensions/Deployment", ["spec", "template"]],
    ["extensions/DaemonSet", ["spec", "template"]],
    ["extensions/ReplicaSet", ["spec", "template"]],
    ["/ReplicationController", ["spec", "template"]],
    ["batch/Job", ["spec", "template"]],
    ["batch/CronJob", ["spec", "jobTemplate", "spec", "template"]],
]);

export const EXPANDABLE_KINDS: ReadonlySet<string> = new Set([...POD_TEMPLATE_SOURCES.keys()].map((k) => k.split("/")[1]));

/**
 * The Pod a workload would create, as Gatekeeper's expansion synthesizes it: the pod template's
 * metadata and spec, the parent's namespace, and the mock name "<parent>-pod".
 * Undefined for objects that are not workloads or have no pod template.
 */
export function expandPodTemplate(parent: K8sObject): K8sObject | undefined {
    if (!parent.kind || !EXPANDABLE_KINDS.has(parent.kind)) return undefined;
    const { group } = parseApiVersion(parent.apiVersion);
    const path = POD_TEMPLATE_SOURCES.get(`${group}/${parent.kind}`);
    if (!path) return undefined;
    let template: any = parent;
    for (const key of path) {
        template = template?.[key];
        if (template === undefined || template === null) return undefined;
    }
    if (typeof template !== "object") return undefined;
    // Gatekeeper's expandResource sets name and namespace with unstructured setters, which give up
    // on a metadata that is null: the Pod then has neither (nor labels).
    if (template.metadata === null) return { apiVersion: "v1", kind: "Pod", metadata: null as never, spec: template.spec ?? {} };
    const metadata: NonNullable<K8sObject["metadata"]> = { ...(template.metadata ?? {}) };
    metadata.name = `${parent.metadata?.name ?? ""}-pod`.toLowerCase();
    if (parent.metadata?.namespace) metadata.namespace = parent.metadata.namespace;
    else delete metadata.namespace;
    return { apiVersion: "v1", kind: "Pod", metadata, spec: template.spec ?? {} };
}
