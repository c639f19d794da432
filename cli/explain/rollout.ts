/**
 * Rollouts and disruption (specification sections 2.2 and 3.3): for every Deployment and
 * StatefulSet, the most pods that exist and the fewest that serve while a rollout runs; for every
 * PodDisruptionBudget, the evictions it allows during a node drain with every pod healthy.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { selectorMatches } from "./reachability";
import { Workload } from "./workloads";

/** An int-or-percent of `total`: percentages round up for surge, down for unavailability (the Deployment controller's rule). */
export function scaled(value: number | string | undefined, total: number, roundUp: boolean, fallback: string): number {
    const v = value ?? fallback;
    if (typeof v === "number") return v;
    const m = /^(\d+)%$/.exec(v);
    if (!m) return Number(v);
    const exact = (Number(m[1]) * total) / 100;
    return roundUp ? Math.ceil(exact) : Math.floor(exact);
}

export interface RolloutBounds {
    workload: string;
    kind: string;
    strategy: string;
    replicas: number;
    maxPods: number;
    minServing: number;
    note: string;
}

export function rolloutBounds(w: Workload): RolloutBounds | undefined {
    const r = w.replicas;
    if (w.kind === "Deployment") {
        const strategy = w.object.spec?.strategy?.type ?? "RollingUpdate";
        if (strategy === "Recreate") return { workload: w.id, kind: w.kind, strategy, replicas: r, maxPods: r, minServing: 0, note: "every old pod stops before a new one starts: nothing serves in between" };
        const ru = w.object.spec?.strategy?.rollingUpdate ?? {};
        const surge = scaled(ru.maxSurge, r, true, "25%");
        let unavailable = scaled(ru.maxUnavailable, r, false, "25%");
        // Both zero is refused by the API; the controller then allows one unavailable.
        if (surge === 0 && unavailable === 0) unavailable = 1;
        return { workload: w.id, kind: w.kind, strategy, replicas: r, maxPods: r + surge, minServing: Math.max(0, r - unavailable), note: `maxSurge ${surge}, maxUnavailable ${unavailable}` };
    }
    if (w.kind === "StatefulSet") {
        const strategy = w.object.spec?.updateStrategy?.type ?? "RollingUpdate";
        if (strategy === "OnDelete") return { workload: w.id, kind: w.kind, strategy, replicas: r, maxPods: r, minServing: r, note: "pods are replaced only when deleted by hand" };
        const unavailable = scaled(w.object.spec?.updateStrategy?.rollingUpdate?.maxUnavailable, r, false, "1") || 1;
        return { workload: w.id, kind: w.kind, strategy, replicas: r, maxPods: r, minServing: Math.max(0, r - unavailable), note: `one ordinal at a time, highest first (maxUnavailable ${unavailable})` };
    }
    return undefined;
}

export interface DrainBudget {
    budget: string;
    workloads: string[];
    expectedPods: number;
    allowedDisruptions: number;
    note: string;
}

/** The disruptions a PDB allows with every selected pod healthy: minAvailable or maxUnavailable (percentages round up). */
export function allowedDisruptions(spec: any, expected: number): number {
    if (spec?.minAvailable !== undefined) return Math.max(0, expected - scaled(spec.minAvailable, expected, true, "0"));
    if (spec?.maxUnavailable !== undefined) return Math.max(0, scaled(spec.maxUnavailable, expected, true, "0"));
    return expected;
}

export interface RolloutReport {
    rollouts: RolloutBounds[];
    budgets: DrainBudget[];
    withoutBudget: string[];
}

export function rollouts(objects: K8sObject[], workloads: Workload[]): RolloutReport {
    const serving = workloads.filter((w) => w.kind === "Deployment" || w.kind === "StatefulSet");
    const budgets: DrainBudget[] = objects.filter((o) => o.kind === "PodDisruptionBudget").map((o) => {
        const ns = o.metadata?.namespace ?? "default";
        const selected = serving.filter((w) => w.namespace === ns && selectorMatches(o.spec?.selector ?? {}, w.podLabels));
        const expected = selected.reduce((n, w) => n + w.replicas, 0);
        const allowed = allowedDisruptions(o.spec, expected);
        const note = allowed === 0 ? "blocks every eviction: a drain waits until the budget allows one" : `a drain evicts at most ${allowed} of these pods at a time`;
        return { budget: `${ns}/${o.metadata?.name}`, workloads: selected.map((w) => w.id), expectedPods: expected, allowedDisruptions: allowed, note };
    });
    const covered = new Set(budgets.flatMap((b) => b.workloads));
    return {
        rollouts: serving.map(rolloutBounds).filter((x): x is RolloutBounds => !!x),
        budgets,
        withoutBudget: serving.filter((w) => !covered.has(w.id)).map((w) => w.id),
    };
}
