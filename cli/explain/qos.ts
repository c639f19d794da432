/**
 * Resources and isolation (specification section 2.1): the QoS class of every pod and the
 * control-group values of every container, init containers included, after the namespace's
 * LimitRange defaults (admission) and the API's request-from-limit defaulting.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { bytes, millis } from "./quantity";
import { Workload } from "./workloads";

export type QosClass = "Guaranteed" | "Burstable" | "BestEffort";

/** Section 2.1: memory.limit_in_bytes of a container without a memory limit (BestEffort value). */
export const UNLIMITED_MEMORY = "9223372036854771712";
export const GUARANTEED_OOM_SCORE_ADJ = -998;
export const BEST_EFFORT_OOM_SCORE_ADJ = 1000;
/** The Burstable range of the table: 2 to 999. */
export const BURSTABLE_OOM_RANGE: [number, number] = [2, 999];
/** cpu.shares of a container without a cpu request (BestEffort: 2, the kernel's minimum). */
export const MIN_SHARES = 2;
const CFS_PERIOD_US = 100000;

export interface Resources {
    /** millicores */
    cpuRequest?: number;
    cpuLimit?: number;
    /** bytes */
    memoryRequest?: number;
    memoryLimit?: number;
}

export interface LimitRangeDefaults {
    /** default: the limit of a container that sets none. */
    default: { cpu?: number; memory?: number };
    /** defaultRequest: the request of a container that sets none. */
    defaultRequest: { cpu?: number; memory?: number };
}

export interface ContainerIsolation {
    name: string;
    init: boolean;
    /** The resources the container runs with, after LimitRange defaults and API defaulting. */
    effective: Resources;
    /** Which values came from the namespace's LimitRange. */
    fromLimitRange: string[];
    cpuShares: number;
    cfsQuotaUs: number;
    /** bytes as a decimal string (the BestEffort value does not fit a JSON number exactly). */
    memoryLimitInBytes: string;
    /** A number, or for Burstable the value on the stack's node memory capacity. */
    oomScoreAdj: number;
}

export interface PodIsolation {
    workload: string;
    kind: string;
    qos: QosClass;
    containers: ContainerIsolation[];
}

/** Section 2.1: request millicores x 1024 / 1000 (at least 2; 2 when no request). */
export function cpuShares(requestMillis: number | undefined): number {
    if (!requestMillis) return MIN_SHARES;
    return Math.max(MIN_SHARES, Math.floor((requestMillis * 1024) / 1000));
}

/** Section 2.1: limit millicores x 100000 / 1000; -1 when no limit. */
export function cfsQuotaUs(limitMillis: number | undefined): number {
    if (limitMillis === undefined) return -1;
    return Math.floor((limitMillis * CFS_PERIOD_US) / 1000);
}

export function memoryLimitInBytes(limitBytes: number | undefined): string {
    return limitBytes === undefined ? UNLIMITED_MEMORY : String(limitBytes);
}

/**
 * Section 2.1's oom_score_adj: Guaranteed -998, BestEffort 1000, Burstable within 2..999 by the
 * node agent's formula 1000 - 1000 x memory request / node memory capacity, clamped to the range.
 */
export function oomScoreAdj(qos: QosClass, memoryRequest: number | undefined, nodeMemoryBytes: number): number {
    if (qos === "Guaranteed") return GUARANTEED_OOM_SCORE_ADJ;
    if (qos === "BestEffort") return BEST_EFFORT_OOM_SCORE_ADJ;
    const raw = 1000 - Math.floor((1000 * (memoryRequest ?? 0)) / nodeMemoryBytes);
    return Math.min(BURSTABLE_OOM_RANGE[1], Math.max(BURSTABLE_OOM_RANGE[0], raw));
}

/** The declared resources of a container spec (cpu in millicores, memory in bytes). */
export function declaredResources(container: any): Resources {
    const r = container?.resources ?? {};
    return { cpuRequest: millis(r.requests?.cpu), cpuLimit: millis(r.limits?.cpu), memoryRequest: bytes(r.requests?.memory), memoryLimit: bytes(r.limits?.memory) };
}

/**
 * Admission, then API defaulting: a missing limit takes the LimitRange's default; a missing
 * request takes defaultRequest, else the default; a request still missing equals the limit.
 */
export function effectiveResources(declared: Resources, lr?: LimitRangeDefaults): { effective: Resources; fromLimitRange: string[] } {
    const e: Resources = { ...declared };
    const from: string[] = [];
    if (lr) {
        if (e.cpuLimit === undefined && lr.default.cpu !== undefined) (e.cpuLimit = lr.default.cpu), from.push("limits.cpu");
        if (e.memoryLimit === undefined && lr.default.memory !== undefined) (e.memoryLimit = lr.default.memory), from.push("limits.memory");
        const reqCpu = lr.defaultRequest.cpu ?? lr.default.cpu;
        const reqMem = lr.defaultRequest.memory ?? lr.default.memory;
        if (e.cpuRequest === undefined && declared.cpuLimit === undefined && reqCpu !== undefined) (e.cpuRequest = reqCpu), from.push("requests.cpu");
        if (e.memoryRequest === undefined && declared.memoryLimit === undefined && reqMem !== undefined) (e.memoryRequest = reqMem), from.push("requests.memory");
    }
    if (e.cpuRequest === undefined && e.cpuLimit !== undefined) e.cpuRequest = e.cpuLimit;
    if (e.memoryRequest === undefined && e.memoryLimit !== undefined) e.memoryRequest = e.memoryLimit;
    return { effective: e, fromLimitRange: from };
}

/** Section 2.1's classes over all containers of a pod (init containers included). */
export function qosClass(containers: Resources[]): QosClass {
    const none = containers.every((c) => c.cpuRequest === undefined && c.cpuLimit === undefined && c.memoryRequest === undefined && c.memoryLimit === undefined);
    if (none) return "BestEffort";
    const guaranteed = containers.every((c) => c.cpuLimit !== undefined && c.memoryLimit !== undefined && c.cpuRequest === c.cpuLimit && c.memoryRequest === c.memoryLimit);
    return guaranteed ? "Guaranteed" : "Burstable";
}

/** The first Container-type LimitRange item of each namespace. */
export function limitRangesOf(objects: K8sObject[]): Map<string, LimitRangeDefaults> {
    const out = new Map<string, LimitRangeDefaults>();
    for (const o of objects.filter((x) => x.kind === "LimitRange")) {
        const item = (o.spec?.limits ?? []).find((l: any) => l.type === "Container");
        if (!item) continue;
        const ns = o.metadata?.namespace ?? "default";
        if (out.has(ns)) continue;
        out.set(ns, {
            default: { cpu: millis(item.default?.cpu), memory: bytes(item.default?.memory) },
            defaultRequest: { cpu: millis(item.defaultRequest?.cpu), memory: bytes(item.defaultRequest?.memory) },
        });
    }
    return out;
}

/** The effective resources of every container of a pod spec (init containers first). */
export function podContainers(podSpec: any, lr?: LimitRangeDefaults): Array<{ name: string; init: boolean; effective: Resources; fromLimitRange: string[] }> {
    const all = [...(podSpec?.initContainers ?? []).map((c: any) => ({ c, init: true })), ...(podSpec?.containers ?? []).map((c: any) => ({ c, init: false }))];
    return all.map(({ c, init }) => ({ name: String(c.name), init, ...effectiveResources(declaredResources(c), lr) }));
}

export function isolationOf(w: Workload, limitRanges: Map<string, LimitRangeDefaults>, nodeMemoryBytes: number): PodIsolation {
    const containers = podContainers(w.podSpec, limitRanges.get(w.namespace));
    const qos = qosClass(containers.map((c) => c.effective));
    return {
        workload: w.id,
        kind: w.kind,
        qos,
        containers: containers.map((c) => ({
            ...c,
            cpuShares: qos === "BestEffort" ? MIN_SHARES : cpuShares(c.effective.cpuRequest),
            cfsQuotaUs: cfsQuotaUs(c.effective.cpuLimit),
            memoryLimitInBytes: memoryLimitInBytes(c.effective.memoryLimit),
            oomScoreAdj: oomScoreAdj(qos, c.effective.memoryRequest, nodeMemoryBytes),
        })),
    };
}
