import type { StackConfig } from "../../config";

/** The recommended labels of one workload; `selector` is the subset that identifies its pods. */
export interface AppLabels {
    labels: Record<string, string>;
    selector: Record<string, string>;
}

/**
 * name: the application (agent-server), component: its part (server, bridge, worker, database),
 * instance: the release instance (e.g. agent-server-4000). name + instance + component select
 * pods, so two workloads never share a selector.
 */
export function appLabels(cfg: StackConfig, app: { name: string; component: string; instance?: string }): AppLabels {
    const instance = app.instance ?? `${app.name}-${app.component}`;
    const selector = {
        "app.kubernetes.io/name": app.name,
        "app.kubernetes.io/instance": instance,
        "app.kubernetes.io/component": app.component,
    };
    return { selector, labels: { ...selector, ...environmentLabels(cfg) } };
}

/** The labels every object of the environment carries: what it is part of and who manages it. */
export function environmentLabels(cfg: StackConfig): Record<string, string> {
    return { "app.kubernetes.io/part-of": cfg.environment.partOf, "app.kubernetes.io/managed-by": cfg.environment.managedBy };
}

/** Reloader annotations: restart the workload when these ConfigMaps or Secrets change. */
export function reloaderAnnotations(cfg: StackConfig, refs: { configMaps?: string[]; secrets?: string[] }): Record<string, string> {
    const out: Record<string, string> = {};
    const d = cfg.environment.reloaderDomain;
    if (refs.configMaps?.length) out[`configmap.${d}/reload`] = [...refs.configMaps].sort().join(",");
    if (refs.secrets?.length) out[`secret.${d}/reload`] = [...refs.secrets].sort().join(",");
    return out;
}

/**
 * Marks a workload that keeps its data in SQLite: one writer, so one replica, Recreate and no
 * autoscaler (policies/spec/sqlite-single-writer.ts enforces it on everything marked).
 */
export const SQLITE_STORAGE = { "ops.example.com/storage": "sqlite" } as const;
