/**
 * Autoscaling (specification section 2.4): the replicas every HorizontalPodAutoscaler reaches over
 * a load profile, at the 15 s control loop: desired = ceil(current x current/target) per metric
 * (the largest wins), clamped to [minReplicas, maxReplicas], then the stabilization windows
 * (scale-up takes the lowest recommendation of its window, scale-down the highest), then the rate
 * policies (selectPolicy Max: the most permissive, Min: the strictest) over their periods.
 * For every workload without an autoscaler, why.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { Workload } from "./workloads";

/** Section 2.4 rule 6 / 8.1: the control loop interval. */
export const LOOP_SECONDS = 15;

export interface ScalingPolicy {
    type: "Pods" | "Percent";
    value: number;
    periodSeconds: number;
}

export interface ScalingRules {
    stabilizationWindowSeconds: number;
    selectPolicy: "Max" | "Min" | "Disabled";
    policies: ScalingPolicy[];
}

/** The API's defaults when behavior leaves a direction out (scale-down window 300 s, scale-up 0 s: section 2.4 rule 3). */
export const DEFAULT_SCALE_UP: ScalingRules = { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Pods", value: 4, periodSeconds: 15 }, { type: "Percent", value: 100, periodSeconds: 15 }] };
export const DEFAULT_SCALE_DOWN: ScalingRules = { stabilizationWindowSeconds: 300, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] };

export interface Hpa {
    name: string;
    target: string;
    minReplicas: number;
    maxReplicas: number;
    metrics: string[];
    scaleUp: ScalingRules;
    scaleDown: ScalingRules;
}

export function rules(given: any, defaults: ScalingRules): ScalingRules {
    return {
        stabilizationWindowSeconds: given?.stabilizationWindowSeconds ?? defaults.stabilizationWindowSeconds,
        selectPolicy: given?.selectPolicy ?? defaults.selectPolicy,
        policies: given?.policies ?? defaults.policies,
    };
}

export function hpaOf(o: K8sObject): Hpa {
    const s = o.spec ?? {};
    const ns = o.metadata?.namespace ?? "default";
    return {
        name: `${ns}/${o.metadata?.name}`,
        target: `${ns}/${s.scaleTargetRef?.name}`,
        minReplicas: s.minReplicas ?? 1,
        maxReplicas: s.maxReplicas,
        metrics: (s.metrics ?? []).map((m: any) => m.type === "Resource" ? `${m.resource?.name} ${m.resource?.target?.type === "Utilization" ? `${m.resource?.target?.averageUtilization}%` : m.resource?.target?.averageValue}` : `${m.type} ${m.pods?.metric?.name ?? m.object?.metric?.name ?? ""}`.trim()),
        scaleUp: rules(s.behavior?.scaleUp, DEFAULT_SCALE_UP),
        scaleDown: rules(s.behavior?.scaleDown, DEFAULT_SCALE_DOWN),
    };
}

/**
 * A load profile: the demand at time t, in pods' worth of load at the target (demand 6 means six
 * pods at exactly the target utilization); every metric of the autoscaler follows it.
 */
export type LoadProfile = (t: number) => number;

export interface ProfileStep {
    at: number;
    demand: number;
}

export function stepProfile(steps: ProfileStep[]): LoadProfile {
    const sorted = [...steps].sort((a, b) => a.at - b.at);
    return (t) => sorted.filter((s) => s.at <= t).pop()?.demand ?? sorted[0].demand;
}

/** Section 2.4 rules 1-2: one desired count per metric, the largest wins; ratio = current/target. */
export function rawDesired(current: number, ratios: number[]): number {
    return Math.max(...ratios.map((r) => Math.ceil(current * r)));
}

interface ScaleEvent {
    t: number;
    change: number;
}

/** The most replicas the scale-up policies allow now (selectPolicy over the policies' periods). */
export function scaleUpLimit(current: number, events: ScaleEvent[], now: number, r: ScalingRules): number {
    if (r.selectPolicy === "Disabled" || r.policies.length === 0) return current;
    const proposals = r.policies.map((p) => {
        const added = events.filter((e) => e.change > 0 && e.t > now - p.periodSeconds).reduce((n, e) => n + e.change, 0);
        const start = current - added;
        return p.type === "Pods" ? start + p.value : Math.ceil(start * (1 + p.value / 100));
    });
    return r.selectPolicy === "Min" ? Math.min(...proposals) : Math.max(...proposals);
}

/** The fewest replicas the scale-down policies allow now. */
export function scaleDownLimit(current: number, events: ScaleEvent[], now: number, r: ScalingRules): number {
    if (r.selectPolicy === "Disabled" || r.policies.length === 0) return current;
    const proposals = r.policies.map((p) => {
        const removed = events.filter((e) => e.change < 0 && e.t > now - p.periodSeconds).reduce((n, e) => n - e.change, 0);
        const start = current + removed;
        return p.type === "Pods" ? start - p.value : Math.trunc(start * (1 - p.value / 100));
    });
    // Max: the most permissive (fewest replicas), Min: the strictest (most replicas).
    return r.selectPolicy === "Min" ? Math.max(...proposals) : Math.min(...proposals);
}

export interface SimulationPoint {
    t: number;
    demand: number;
    desired: number;
    replicas: number;
}

export interface Simulation {
    hpa: string;
    target: string;
    points: SimulationPoint[];
    /** The replicas after each change: [seconds, replicas]. */
    changes: Array<[number, number]>;
    peak: number;
    final: number;
    /** Seconds from the first step up until the peak is first reached. */
    secondsToPeak?: number;
    /** Seconds from the step down until the final count is first reached. */
    secondsToSettle?: number;
}

export function simulate(h: Hpa, profile: LoadProfile, durationSeconds: number, start = h.minReplicas, marks: { up?: number; down?: number } = {}): Simulation {
    let current = Math.min(h.maxReplicas, Math.max(h.minReplicas, start));
    // Steady at the start count before the profile begins: the windows hold that recommendation.
    const history: Array<{ t: number; rec: number }> = [];
    const longest = Math.max(h.scaleUp.stabilizationWindowSeconds, h.scaleDown.stabilizationWindowSeconds);
    for (let t = -Math.ceil(longest / LOOP_SECONDS) * LOOP_SECONDS; t < 0; t += LOOP_SECONDS) history.push({ t, rec: current });
    const events: ScaleEvent[] = [];
    const points: SimulationPoint[] = [];
    const changes: Array<[number, number]> = [[0, current]];
    for (let t = 0; t <= durationSeconds; t += LOOP_SECONDS) {
        const demand = profile(t);
        // Each metric's current/target ratio: demand spread over the current pods.
        const ratio = demand / current;
        let desired = Math.min(h.maxReplicas, Math.max(h.minReplicas, rawDesired(current, h.metrics.length > 0 ? h.metrics.map(() => ratio) : [ratio])));
        history.push({ t, rec: desired });
        // Stabilization: the lowest recommendation of the scale-up window, the highest of the scale-down window.
        let up = desired;
        let down = desired;
        for (const r of history) {
            if (r.t > t - h.scaleUp.stabilizationWindowSeconds || r.t === t) up = Math.min(up, r.rec);
            if (r.t > t - h.scaleDown.stabilizationWindowSeconds || r.t === t) down = Math.max(down, r.rec);
        }
        let stabilized = current;
        if (stabilized < up) stabilized = up;
        if (stabilized > down) stabilized = down;
        desired = stabilized;
        if (desired > current) desired = Math.min(desired, scaleUpLimit(current, events, t, h.scaleUp), h.maxReplicas);
        else if (desired < current) desired = Math.max(desired, scaleDownLimit(current, events, t, h.scaleDown), h.minReplicas);
        if (desired !== current) {
            events.push({ t, change: desired - current });
            current = desired;
            changes.push([t, current]);
        }
        points.push({ t, demand, desired: history[history.length - 1].rec, replicas: current });
    }
    const peak = Math.max(...points.map((p) => p.replicas));
    const final = points[points.length - 1].replicas;
    const firstAt = (n: number, after: number) => points.find((p) => p.t >= after && p.replicas === n)?.t;
    const peakAt = firstAt(peak, marks.up ?? 0);
    const settleAt = marks.down !== undefined ? firstAt(final, marks.down) : undefined;
    return {
        hpa: h.name,
        target: h.target,
        points,
        changes,
        peak,
        final,
        secondsToPeak: peakAt !== undefined && marks.up !== undefined ? peakAt - marks.up : undefined,
        secondsToSettle: settleAt !== undefined && marks.down !== undefined ? settleAt - marks.down : undefined,
    };
}

/** The default profile: at the minimum for a minute, a step up to twice the maximum's worth for 10 minutes, a step down to half the minimum for 15 minutes. */
export function defaultProfile(h: Hpa): { profile: LoadProfile; duration: number; up: number; down: number; description: string } {
    const up = 60;
    const down = 660;
    const high = 2 * h.maxReplicas;
    const low = Math.max(0.5, h.minReplicas / 2);
    return {
        profile: stepProfile([{ at: 0, demand: h.minReplicas }, { at: up, demand: high }, { at: down, demand: low }]),
        duration: 1560,
        up,
        down,
        description: `load of ${h.minReplicas} pods at target until ${up} s, ${high} from ${up} s, ${low} from ${down} s, until 1560 s`,
    };
}

/** Why a workload has no autoscaler, from what the render says about it. */
export function whyNoAutoscaler(w: Workload, objects: K8sObject[]): string {
    if (w.kind === "CronJob" || w.kind === "Job") return "runs to completion (a Job): nothing to scale";
    if (w.kind === "DaemonSet") return "one pod per node (a DaemonSet)";
    const claims = (w.podSpec?.volumes ?? []).filter((v: any) => v.persistentVolumeClaim).map((v: any) => v.persistentVolumeClaim.claimName);
    const rwo = objects.filter((o) => o.kind === "PersistentVolumeClaim" && o.metadata?.namespace === w.namespace && claims.includes(o.metadata?.name) && (o.spec?.accessModes ?? []).includes("ReadWriteOnce"));
    if (w.kind === "StatefulSet") return `a StatefulSet: ${w.replicas} member(s) with their own volumes and stable names; membership is set in config, not by load`;
    if (w.object.spec?.strategy?.type === "Recreate" || rwo.length > 0)
        return `a single writer (${rwo.length > 0 ? `ReadWriteOnce volume ${rwo.map((o) => o.metadata?.name).join(", ")}` : "Recreate strategy"}): a second replica cannot run beside it`;
    return `no HorizontalPodAutoscaler declared: fixed at ${w.replicas} replica(s) from config`;
}

export interface AutoscalingReport {
    loopSeconds: number;
    autoscalers: Array<Hpa & { profile: string; peak: number; final: number; secondsToPeak?: number; secondsToSettle?: number; changes: Array<[number, number]> }>;
    withoutAutoscaler: Array<{ workload: string; kind: string; why: string }>;
}

export function autoscaling(objects: K8sObject[], workloads: Workload[]): AutoscalingReport {
    const hpas = objects.filter((o) => o.kind === "HorizontalPodAutoscaler").map(hpaOf).sort((a, b) => (a.name < b.name ? -1 : 1));
    const targets = new Set(hpas.map((h) => h.target));
    return {
        loopSeconds: LOOP_SECONDS,
        autoscalers: hpas.map((h) => {
            const p = defaultProfile(h);
            const s = simulate(h, p.profile, p.duration, h.minReplicas, { up: p.up, down: p.down });
            return { ...h, profile: p.description, peak: s.peak, final: s.final, secondsToPeak: s.secondsToPeak, secondsToSettle: s.secondsToSettle, changes: s.changes };
        }),
        withoutAutoscaler: workloads.filter((w) => !targets.has(w.id)).map((w) => ({ workload: w.id, kind: w.kind, why: whyNoAutoscaler(w, objects) })),
    };
}
