/**
 * Capacity: the stack's worker nodes (count and size from config) minus the node agent's
 * systemReserved, kubeReserved and evictionHard (section 2.1), against the requests of every
 * workload at the maximum replicas of its autoscaler, with the surge pods of a rolling update
 * (maxSurge) and the CronJobs whose runs can overlap; pods are placed with the topology spread
 * and anti-affinity the program sets. Whether it fits, on how many nodes, and what is left.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { LimitRangeDefaults, podContainers } from "./qos";
import { bytes, cpuText, memText, millis } from "./quantity";
import { selectorMatches, Selector } from "./reachability";
import { rolloutBounds } from "./rollout";
import { Workload } from "./workloads";

export interface NodePool {
    count: number;
    /** millicores of one node */
    cpu: number;
    /** bytes of one node */
    memory: number;
    /** bytes of one node's disk (nodefs), when the pool says it */
    ephemeralStorage?: number;
}

export interface NodeAgentReservations {
    systemReserved: { cpu: number; memory: number; ephemeralStorage?: number };
    kubeReserved: { cpu: number; memory: number; ephemeralStorage?: number };
    /** evictionHard memory.available: a quantity or a percentage of the node's memory. */
    evictionMemoryAvailable: string;
    /** evictionHard nodefs.available: a quantity or a percentage of the node's disk. */
    evictionNodefsAvailable?: string;
    /** The kubelet's maxPods (KUBELET_DEFAULT_MAX_PODS when its configuration does not set it). */
    maxPods?: number;
}

/** KubeletConfiguration's default maxPods (kubelet.config.k8s.io/v1beta1). */
export const KUBELET_DEFAULT_MAX_PODS = 110;

export interface Allocatable {
    cpu: number;
    memory: number;
    /** Pods one node admits (the kubelet's maxPods). */
    pods?: number;
    /** bytes of disk for the pods' ephemeral storage (when the pool says the disk size) */
    ephemeralStorage?: number;
}

/** Node allocatable = capacity - systemReserved - kubeReserved - evictionHard (memory only for the threshold). */
export function allocatable(pool: NodePool, agent: NodeAgentReservations): Allocatable {
    const threshold = (value: string, of: number) => {
        const v = value.trim();
        return v.endsWith("%") ? Math.ceil((of * Number(v.slice(0, -1))) / 100) : bytes(v) ?? 0;
    };
    const eviction = threshold(agent.evictionMemoryAvailable, pool.memory);
    const disk = pool.ephemeralStorage;
    return {
        ...(disk === undefined ? {} : {
            // Never below nothing: reservations larger than the node leave no room (config/platformRules.ts refuses them).
            ephemeralStorage: Math.max(0, disk - (agent.systemReserved.ephemeralStorage ?? 0) - (agent.kubeReserved.ephemeralStorage ?? 0) - threshold(agent.evictionNodefsAvailable ?? "0", disk)),
        }),
        cpu: Math.max(0, pool.cpu - agent.systemReserved.cpu - agent.kubeReserved.cpu),
        memory: Math.max(0, pool.memory - agent.systemReserved.memory - agent.kubeReserved.memory - eviction),
        pods: agent.maxPods ?? KUBELET_DEFAULT_MAX_PODS,
    };
}

export interface PodRequest {
    cpu: number;
    memory: number;
    /** bytes of ephemeral-storage requests (the containers' own; no LimitRange default sets one) */
    ephemeralStorage?: number;
}

/** What the scheduler reserves for a pod: the larger of the containers' sum and the largest init container. */
export function podRequest(podSpec: any, lr?: LimitRangeDefaults): PodRequest {
    const all = podContainers(podSpec, lr);
    const sum = (xs: typeof all, k: "cpuRequest" | "memoryRequest") => xs.reduce((n, c) => n + (c.effective[k] ?? 0), 0);
    const max = (xs: typeof all, k: "cpuRequest" | "memoryRequest") => Math.max(0, ...xs.map((c) => c.effective[k] ?? 0));
    const app = all.filter((c) => !c.init);
    const init = all.filter((c) => c.init);
    const disk = (c: any) => bytes(c?.resources?.requests?.["ephemeral-storage"]) ?? 0;
    const appDisk = (podSpec?.containers ?? []).reduce((n: number, c: any) => n + disk(c), 0);
    const initDisk = Math.max(0, ...(podSpec?.initContainers ?? []).map(disk));
    return {
        cpu: Math.max(sum(app, "cpuRequest"), max(init, "cpuRequest")),
        memory: Math.max(sum(app, "memoryRequest"), max(init, "memoryRequest")),
        ephemeralStorage: Math.max(appDisk, initDisk),
    };
}

// ---- cron overlap ----

function cronField(field: string, lo: number, hi: number): Set<number> | "any" {
    if (field === "*" || field === "?") return "any";
    const out = new Set<number>();
    for (const part of field.split(",")) {
        const m = /^(\*|\d+)(?:-(\d+))?(?:\/(\d+))?$/.exec(part);
        if (!m) return "any";
        const from = m[1] === "*" ? lo : Number(m[1]);
        const to = m[2] !== undefined ? Number(m[2]) : m[1] === "*" || m[3] ? hi : from;
        const step = Number(m[3] ?? 1);
        for (let v = from; v <= to; v += step) out.add(v);
    }
    return out;
}

const DAYS_IN_MONTH = [31, 29, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

/** False for a schedule whose day of month never occurs in its months (e.g. "0 0 31 2 *"). */
export function cronCanFire(schedule: string): boolean {
    const f = schedule.trim().split(/\s+/);
    const dom = cronField(f[2] ?? "*", 1, 31);
    const months = cronField(f[3] ?? "*", 1, 12);
    if (dom === "any") return true;
    const ms = months === "any" ? [...Array(12).keys()].map((m) => m + 1) : [...months];
    return ms.some((m) => [...dom].some((d) => d <= DAYS_IN_MONTH[m - 1]));
}

/**
 * The minutes of a day at which a five-field schedule can fire (day fields are taken as "any
 * day": the worst case); none when its days never occur.
 */
export function cronMinutesOfDay(schedule: string): number[] {
    const f = schedule.trim().split(/\s+/);
    if (f.length < 5) throw new Error(`not a cron schedule: ${schedule}`);
    if (!cronCanFire(schedule)) return [];
    const minutes = cronField(f[0], 0, 59);
    const hours = cronField(f[1], 0, 23);
    const out: number[] = [];
    for (let h = 0; h < 24; h++) {
        if (hours !== "any" && !hours.has(h)) continue;
        for (let m = 0; m < 60; m++) if (minutes === "any" || minutes.has(m)) out.push(h * 60 + m);
    }
    return out;
}

/** A CronJob's run length when it sets no activeDeadlineSeconds. */
export const DEFAULT_RUN_SECONDS = 3600;

export interface CronRun {
    id: string;
    minutes: number[];
    runSeconds: number;
    request: PodRequest;
    pods: number;
}

/** The minute of the day at which the most CronJob pods run at once (by cpu, then memory), and which. */
export function cronPeak(runs: CronRun[]): { minute: number; jobs: string[]; cpu: number; memory: number } {
    const day = 24 * 60;
    const active: Array<Set<string>> = Array.from({ length: day }, () => new Set());
    for (const r of runs) {
        const span = Math.max(1, Math.ceil(r.runSeconds / 60));
        for (const start of r.minutes) for (let k = 0; k < Math.min(span, day); k++) active[(start + k) % day].add(r.id);
    }
    let best = { minute: 0, jobs: [] as string[], cpu: 0, memory: 0 };
    for (let m = 0; m < day; m++) {
        const jobs = runs.filter((r) => active[m].has(r.id));
        const cpu = jobs.reduce((n, r) => n + r.request.cpu * r.pods, 0);
        const memory = jobs.reduce((n, r) => n + r.request.memory * r.pods, 0);
        if (cpu > best.cpu || (cpu === best.cpu && memory > best.memory)) best = { minute: m, jobs: jobs.map((r) => r.id).sort(), cpu, memory };
    }
    return best;
}

// ---- placement ----

export interface Pod {
    id: string;
    workload: string;
    namespace: string;
    labels: Record<string, string>;
    request: PodRequest;
    spread: Array<{ maxSkew: number; hard: boolean; selector: Selector }>;
    antiAffinity: Array<{ hard: boolean; selector: Selector }>;
}

export interface NodeState {
    name: string;
    cpuLeft: number;
    memoryLeft: number;
    /** bytes of the disk's allocatable left (Infinity when the pool does not say the disk size) */
    ephemeralLeft: number;
    pods: Pod[];
}

const HOSTNAME = "kubernetes.io/hostname";

function constraintsOf(podSpec: any): Pick<Pod, "spread" | "antiAffinity"> {
    const spread = (podSpec?.topologySpreadConstraints ?? []).filter((c: any) => c.topologyKey === HOSTNAME)
        .map((c: any) => ({ maxSkew: c.maxSkew ?? 1, hard: (c.whenUnsatisfiable ?? "DoNotSchedule") === "DoNotSchedule", selector: c.labelSelector ?? {} }));
    const anti = podSpec?.affinity?.podAntiAffinity ?? {};
    const antiAffinity = [
        ...(anti.requiredDuringSchedulingIgnoredDuringExecution ?? []).filter((t: any) => t.topologyKey === HOSTNAME).map((t: any) => ({ hard: true, selector: t.labelSelector ?? {} })),
        ...(anti.preferredDuringSchedulingIgnoredDuringExecution ?? []).filter((t: any) => t.podAffinityTerm?.topologyKey === HOSTNAME).map((t: any) => ({ hard: false, selector: t.podAffinityTerm.labelSelector ?? {} })),
    ];
    return { spread, antiAffinity };
}

const matching = (node: NodeState, pod: Pod, sel: Selector) => node.pods.filter((p) => p.namespace === pod.namespace && selectorMatches(sel, p.labels)).length;

/**
 * Places pods one by one, largest first, like the scheduler: filters (resources, required
 * anti-affinity, DoNotSchedule spread), then scores (ScheduleAnyway spread and preferred
 * anti-affinity first, then the least allocated node).
 */
export function place(pods: Pod[], nodeCount: number, perNode: Allocatable): { nodes: NodeState[]; unschedulable: Pod[] } {
    const nodes: NodeState[] = Array.from({ length: nodeCount }, (_, i) => ({ name: `node-${i + 1}`, cpuLeft: perNode.cpu, memoryLeft: perNode.memory, ephemeralLeft: perNode.ephemeralStorage ?? Infinity, pods: [] }));
    const unschedulable: Pod[] = [];
    const order = [...pods].sort((a, b) => b.request.cpu - a.request.cpu || b.request.memory - a.request.memory || (a.id < b.id ? -1 : 1));
    const maxPods = perNode.pods ?? KUBELET_DEFAULT_MAX_PODS;
    for (const pod of order) {
        const candidates = nodes.filter((n) => {
            if (n.pods.length >= maxPods) return false;
            if (n.cpuLeft < pod.request.cpu || n.memoryLeft < pod.request.memory || n.ephemeralLeft < (pod.request.ephemeralStorage ?? 0)) return false;
            if (pod.antiAffinity.some((a) => a.hard && matching(n, pod, a.selector) > 0)) return false;
            return pod.spread.every((s) => {
                if (!s.hard) return true;
                const min = Math.min(...nodes.map((x) => matching(x, pod, s.selector)));
                return matching(n, pod, s.selector) + 1 - min <= s.maxSkew;
            });
        });
        if (candidates.length === 0) {
            unschedulable.push(pod);
            continue;
        }
        const score = (n: NodeState) => {
            const soft = pod.spread.reduce((x, s) => x + matching(n, pod, s.selector), 0) + pod.antiAffinity.filter((a) => !a.hard).reduce((x, a) => x + matching(n, pod, a.selector), 0);
            const free = n.cpuLeft / Math.max(1, perNode.cpu) + n.memoryLeft / Math.max(1, perNode.memory);
            return [soft, -free];
        };
        candidates.sort((a, b) => {
            const [sa, fa] = score(a);
            const [sb, fb] = score(b);
            return sa - sb || fa - fb;
        });
        const n = candidates[0];
        n.cpuLeft -= pod.request.cpu;
        n.ephemeralLeft -= pod.request.ephemeralStorage ?? 0;
        n.memoryLeft -= pod.request.memory;
        n.pods.push(pod);
    }
    return { nodes, unschedulable };
}

// ---- the stack ----

export interface CapacityInput {
    workloads: Workload[];
    objects: K8sObject[];
    limitRanges: Map<string, LimitRangeDefaults>;
    pool: NodePool;
    agent: NodeAgentReservations;
    /** The add-on charts' workloads (addonPods.ts): counted at their replicas, without rolling-update surge. */
    addonWorkloads?: Workload[];
    /** Per add-on Release, the ids of its workloads (for the per-chart lines). */
    addonCharts?: Array<{ release: string; namespace: string; chart: string; version: string; workloads: string[] }>;
}

export interface Demand {
    cpu: number;
    memory: number;
    /** bytes of ephemeral-storage requests */
    ephemeralStorage: number;
    pods: number;
}

export interface CapacityReport {
    nodes: { count: number; cpu: string; memory: string };
    allocatablePerNode: { cpu: string; memory: string; pods: number };
    demand: { steady: Demand; rolloutSurge: Demand; cronJobs: Demand & { peakAt: string; jobs: string[] }; addons: Demand; total: Demand };
    /** Per add-on chart: its pods (replicas; a DaemonSet's one per node) and their requests, from the values the program emits. */
    addons: Array<{ chart: string; version: string; release: string; namespace: string; pods: number; cpu: string; memory: string; workloads: Array<{ workload: string; kind: string; pods: number; cpuPerPod: string; memoryPerPod: string }> }>;
    totals: { cpu: string; memory: string; allocatableCpu: string; allocatableMemory: string; ephemeralStorage: string; allocatableEphemeralStorage?: string };
    fits: boolean;
    /** Suspended CronJobs, or schedules that never fire: run by hand (restores), left out of the peak. */
    manualCronJobs: string[];
    unschedulable: string[];
    /** The fewest nodes of this size the stack fits on (placement included), or null beyond 4x the count. */
    minNodes: number | null;
    left: { cpu: string; memory: string };
    perNode: Array<{ node: string; pods: number; cpuLeft: string; memoryLeft: string }>;
    /** Requests per workload in the total (largest cpu first). */
    byWorkload: Array<{ workload: string; pods: number; cpu: string; memory: string }>;
    assumptions: string[];
}

const add = (a: Demand, r: PodRequest, n = 1): Demand => ({ cpu: a.cpu + r.cpu * n, memory: a.memory + r.memory * n, ephemeralStorage: a.ephemeralStorage + (r.ephemeralStorage ?? 0) * n, pods: a.pods + n });
const ZERO = (): Demand => ({ cpu: 0, memory: 0, ephemeralStorage: 0, pods: 0 });
const hhmm = (m: number) => `${String(Math.floor(m / 60)).padStart(2, "0")}:${String(m % 60).padStart(2, "0")}`;

export function capacity(input: CapacityInput): CapacityReport {
    const { workloads, objects, limitRanges, pool, agent, addonWorkloads = [], addonCharts = [] } = input;
    const perNode = allocatable(pool, agent);
    const maxOf = new Map<string, number>();
    for (const h of objects.filter((o) => o.kind === "HorizontalPodAutoscaler"))
        maxOf.set(`${h.metadata?.namespace ?? "default"}/${h.spec?.scaleTargetRef?.name}`, h.spec?.maxReplicas);

    const pods: Pod[] = [];
    let steady = ZERO();
    let surge = ZERO();
    const daemonPods: Pod[] = [];
    const runs: CronRun[] = [];
    const manual: string[] = [];
    const mkPod = (w: Workload, i: number | string, request: PodRequest): Pod => ({ id: `${w.id}#${i}`, workload: w.id, namespace: w.namespace, labels: w.podLabels, request, ...constraintsOf(w.podSpec) });
    for (const w of workloads) {
        const request = podRequest(w.podSpec, limitRanges.get(w.namespace));
        if (w.kind === "CronJob") {
            if (w.object.spec?.suspend === true || !cronCanFire(w.object.spec?.schedule ?? "* * * * *")) {
                manual.push(w.id);
                continue;
            }
            const deadline = w.object.spec?.jobTemplate?.spec?.activeDeadlineSeconds;
            runs.push({ id: w.id, minutes: cronMinutesOfDay(w.object.spec?.schedule ?? "* * * * *"), runSeconds: deadline ?? DEFAULT_RUN_SECONDS, request, pods: w.replicas });
            continue;
        }
        if (w.kind === "DaemonSet") {
            daemonPods.push(mkPod(w, "daemon", request));
            steady = add(steady, request, pool.count);
            continue;
        }
        const replicas = w.kind === "Job" ? w.replicas : maxOf.get(w.id) ?? w.replicas;
        for (let i = 0; i < replicas; i++) pods.push(mkPod(w, i, request));
        steady = add(steady, request, replicas);
        if (w.kind === "Deployment") {
            const b = rolloutBounds({ ...w, replicas });
            const extra = b ? b.maxPods - replicas : 0;
            for (let i = 0; i < extra; i++) pods.push(mkPod(w, `surge-${i}`, request));
            surge = add(surge, request, extra);
        }
    }
    const peak = cronPeak(runs);
    let cron = ZERO();
    for (const r of runs.filter((x) => peak.jobs.includes(x.id))) {
        const w = workloads.find((x) => x.id === r.id)!;
        for (let i = 0; i < r.pods; i++) pods.push(mkPod(w, `run-${i}`, r.request));
        cron = add(cron, r.request, r.pods);
    }
    let addonDemand = ZERO();
    const addonRows = new Map<string, { workload: string; kind: string; pods: number; request: PodRequest }>();
    for (const w of addonWorkloads) {
        const request = podRequest(w.podSpec, limitRanges.get(w.namespace));
        const n = w.kind === "DaemonSet" ? pool.count : w.replicas;
        if (w.kind === "DaemonSet") daemonPods.push(mkPod(w, "daemon", request));
        else for (let i = 0; i < n; i++) pods.push(mkPod(w, i, request));
        addonDemand = add(addonDemand, request, n);
        addonRows.set(w.id, { workload: w.id, kind: w.kind, pods: n, request });
    }
    const addons = addonCharts.map((c) => {
        const rows = c.workloads.map((id) => addonRows.get(id)).filter((x): x is NonNullable<typeof x> => x !== undefined);
        const d = rows.reduce((a, r) => add(a, r.request, r.pods), ZERO());
        return {
            chart: c.chart, version: c.version, release: c.release, namespace: c.namespace, pods: d.pods, cpu: cpuText(d.cpu), memory: memText(d.memory),
            workloads: rows.map((r) => ({ workload: r.workload, kind: r.kind, pods: r.pods, cpuPerPod: cpuText(r.request.cpu), memoryPerPod: memText(r.request.memory) })),
        };
    });
    const total = [surge, cron, addonDemand].reduce((a, b) => ({ cpu: a.cpu + b.cpu, memory: a.memory + b.memory, ephemeralStorage: a.ephemeralStorage + b.ephemeralStorage, pods: a.pods + b.pods }), steady);

    const attempt = (n: number) => {
        const all = [...Array.from({ length: n }, () => daemonPods).flat().map((p, i) => ({ ...p, id: `${p.id}-${i}` })), ...pods];
        // Daemon pods are bound to their node: reserve them first, one per node.
        return place(all, n, perNode);
    };
    const result = attempt(pool.count);
    let minNodes: number | null = null;
    for (let n = 1; n <= pool.count * 4; n++) {
        if (attempt(n).unschedulable.length === 0) {
            minNodes = n;
            break;
        }
    }
    const cpuLeft = result.nodes.reduce((x, n) => x + n.cpuLeft, 0);
    const memLeft = result.nodes.reduce((x, n) => x + n.memoryLeft, 0);
    return {
        nodes: { count: pool.count, cpu: cpuText(pool.cpu), memory: memText(pool.memory) },
        allocatablePerNode: { cpu: cpuText(perNode.cpu), memory: memText(perNode.memory), pods: perNode.pods ?? KUBELET_DEFAULT_MAX_PODS },
        demand: { steady, rolloutSurge: surge, cronJobs: { ...cron, peakAt: hhmm(peak.minute), jobs: peak.jobs }, addons: addonDemand, total },
        addons,
        totals: {
            cpu: cpuText(total.cpu), memory: memText(total.memory), allocatableCpu: cpuText(perNode.cpu * pool.count), allocatableMemory: memText(perNode.memory * pool.count),
            ephemeralStorage: memText(total.ephemeralStorage),
            ...(perNode.ephemeralStorage === undefined ? {} : { allocatableEphemeralStorage: memText(perNode.ephemeralStorage * pool.count) }),
        },
        fits: result.unschedulable.length === 0,
        manualCronJobs: manual,
        unschedulable: result.unschedulable.map((p) => `${p.id} (${cpuText(p.request.cpu)} cpu, ${memText(p.request.memory)})`),
        minNodes,
        left: { cpu: cpuText(cpuLeft), memory: memText(memLeft) },
        byWorkload: byWorkload([...pods, ...daemonPods.flatMap((p) => Array.from({ length: pool.count }, () => p))]),
        perNode: result.nodes.map((n) => ({ node: n.name, pods: n.pods.length, cpuLeft: cpuText(n.cpuLeft), memoryLeft: memText(n.memoryLeft) })),
        assumptions: [
            "replicas at each autoscaler's maxReplicas; every Deployment rolling at once with its maxSurge pods",
            `the CronJobs running together at the busiest minute of a day (${hhmm(peak.minute)}), each for its activeDeadlineSeconds (${DEFAULT_RUN_SECONDS} s when unset); day fields taken as every day`,
            "requests after the namespace's LimitRange defaults; a pod reserves max(sum of its containers, largest init container)",
            "the add-on charts' pods as their pinned charts render them with the values the program gives each Release (cli/explain/addonPods.ts), hook Jobs included, at their replicas without a rolling-update surge",
            `at most ${perNode.pods ?? KUBELET_DEFAULT_MAX_PODS} pods per node (the kubelet's maxPods${agent.maxPods === undefined ? `, its default: the kubelet configuration does not set it` : ""}), daemon pods included`,
        ],
    };
}

function byWorkload(pods: Pod[]): CapacityReport["byWorkload"] {
    const sums = new Map<string, Demand>();
    for (const p of pods) sums.set(p.workload, add(sums.get(p.workload) ?? ZERO(), p.request));
    return [...sums].sort(([a, x], [b, y]) => y.cpu - x.cpu || y.memory - x.memory || (a < b ? -1 : 1)).map(([workload, d]) => ({ workload, pods: d.pods, cpu: cpuText(d.cpu), memory: memText(d.memory) }));
}

/** Node pool and reservations from the render's node files (node/pool.yaml, node/kubelet-config.yaml). */
function maxPodsOf(v: unknown): number | undefined {
    if (v === undefined || v === null) return undefined;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1) throw new Error(`node/kubelet-config.yaml maxPods: expected a whole number of pods, got ${JSON.stringify(v)}`);
    return n;
}

export function nodesFromFiles(pool: any, kubelet: any): { pool: NodePool; agent: NodeAgentReservations } {
    const need = (v: unknown, what: string) => {
        if (v === undefined || v === null) throw new Error(`${what} is missing`);
        return v;
    };
    return {
        pool: {
            count: Number(need(pool?.count, "node/pool.yaml count")), cpu: millis(need(pool?.cpu, "node/pool.yaml cpu"))!, memory: bytes(need(pool?.memory, "node/pool.yaml memory"))!,
            ...(pool?.ephemeralStorage === undefined ? {} : { ephemeralStorage: bytes(pool.ephemeralStorage) }),
        },
        agent: {
            systemReserved: { cpu: millis(kubelet?.systemReserved?.cpu) ?? 0, memory: bytes(kubelet?.systemReserved?.memory) ?? 0, ephemeralStorage: bytes(kubelet?.systemReserved?.["ephemeral-storage"]) ?? 0 },
            kubeReserved: { cpu: millis(kubelet?.kubeReserved?.cpu) ?? 0, memory: bytes(kubelet?.kubeReserved?.memory) ?? 0, ephemeralStorage: bytes(kubelet?.kubeReserved?.["ephemeral-storage"]) ?? 0 },
            evictionMemoryAvailable: String(kubelet?.evictionHard?.["memory.available"] ?? "100Mi"),
            evictionNodefsAvailable: String(kubelet?.evictionHard?.["nodefs.available"] ?? "0"),
            maxPods: maxPodsOf(kubelet?.maxPods),
        },
    };
}
