/**
 * The workloads of a render as the explain modules see them: one entry per Deployment,
 * StatefulSet, DaemonSet, Job and CronJob, with its pod template, replicas and labels.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";

export const WORKLOAD_KINDS = ["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"] as const;
export type WorkloadKind = (typeof WORKLOAD_KINDS)[number];

export interface Workload {
    kind: WorkloadKind;
    namespace: string;
    name: string;
    /** `<namespace>/<name>`, or `<namespace>/<kind>/<name>` when two kinds share a name. */
    id: string;
    replicas: number;
    /** Labels of the pods (the pod template's). */
    podLabels: Record<string, string>;
    podSpec: any;
    object: K8sObject;
}

const isWorkloadKind = (k: unknown): k is WorkloadKind => (WORKLOAD_KINDS as readonly unknown[]).includes(k);

export function podTemplateOf(o: K8sObject): any {
    return o.kind === "CronJob" ? o.spec?.jobTemplate?.spec?.template : o.spec?.template;
}

/** Every workload of a list of objects, sorted by id; replicas default to 1 (parallelism for Jobs). */
export function workloadsOf(objects: K8sObject[]): Workload[] {
    const list = objects.filter((o) => isWorkloadKind(o.kind) && o.metadata?.name).map((o) => {
        const template = podTemplateOf(o) ?? {};
        const kind = o.kind as WorkloadKind;
        const replicas = kind === "Job" ? o.spec?.parallelism ?? 1 : kind === "CronJob" ? o.spec?.jobTemplate?.spec?.parallelism ?? 1 : kind === "DaemonSet" ? 1 : o.spec?.replicas ?? 1;
        return {
            kind,
            namespace: o.metadata?.namespace ?? "default",
            name: o.metadata!.name!,
            id: `${o.metadata?.namespace ?? "default"}/${o.metadata!.name}`,
            replicas: Number(replicas),
            podLabels: { ...(template.metadata?.labels ?? {}) },
            podSpec: template.spec ?? { containers: [] },
            object: o,
        };
    });
    const count = new Map<string, number>();
    for (const w of list) count.set(w.id, (count.get(w.id) ?? 0) + 1);
    for (const w of list) if (count.get(w.id)! > 1) w.id = `${w.namespace}/${w.kind}/${w.name}`;
    return list.sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0));
}

export const byKind = (objects: K8sObject[], kind: string) => objects.filter((o) => o.kind === kind);
