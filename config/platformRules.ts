/**
 * Cross-key rules of the platform areas (registered in config/rules.ts): key-store and node-agent
 * settings inside the specification's ranges (section 8.1), the ACME server per tier, vertical
 * autoscalers never on horizontally autoscaled workloads, repository host keys, quota overrides.
 */
import type { Config, ConfigProblem, Rule } from "./rule";
import { cpuMillis, keyOf, quantityBytes } from "./schema";
import { compareVersions, minorOf, OLDEST_SUPPORTED, SCHEMA_VERSION } from "./kubernetesVersion";

const GiB = 2 ** 30;
export const KEY_STORE_LIMITS = {
    /** Section 8.1: production advice 8 to 16 GB (8589934592 = 8 GiB); the default is 2 GB. */
    prodQuotaBytes: { min: 8 * GiB, max: 16 * GiB },
    quotaBytes: { min: 2 * GiB, max: 16 * GiB },
    heartbeatMs: { min: 100, max: 300 },
    electionMs: { min: 1000, max: 3000 },
    electionPerHeartbeat: 10,
} as const;

/** Section 3.2: a node without a status update for 40 s becomes NotReady. */
export const NODE_MONITOR_GRACE_SECONDS = 40;

export const ACME_PRODUCTION = "https://acme-v02.api.letsencrypt.org/directory";
export const ACME_STAGING = "https://acme-staging-v02.api.letsencrypt.org/directory";

const keyStore: Rule = (c) => {
    const k = c.keyStore;
    const L = KEY_STORE_LIMITS;
    const out: ConfigProblem[] = [];
    const quota = c.environment.tier === "prod" ? L.prodQuotaBytes : L.quotaBytes;
    if (k.quotaBackendBytes < quota.min || k.quotaBackendBytes > quota.max)
        out.push({
            key: "keyStoreQuotaBackendBytes",
            problem: `${k.quotaBackendBytes} is outside ${quota.min}..${quota.max}${c.environment.tier === "prod" ? " (prod)" : ""}`,
            expected: c.environment.tier === "prod" ? "8 to 16 GiB in prod: 8589934592 (8 GiB) up to 17179869184" : "2 to 16 GiB: 2147483648 up to 17179869184",
        });
    if (k.heartbeatIntervalMs < L.heartbeatMs.min || k.heartbeatIntervalMs > L.heartbeatMs.max)
        out.push({ key: "keyStoreHeartbeatIntervalMs", problem: `${k.heartbeatIntervalMs} ms is outside 100..300 ms`, expected: "a heartbeat-interval from 100 to 300 milliseconds" });
    if (k.electionTimeoutMs < L.electionMs.min || k.electionTimeoutMs > L.electionMs.max)
        out.push({ key: "keyStoreElectionTimeoutMs", problem: `${k.electionTimeoutMs} ms is outside 1000..3000 ms`, expected: "an election-timeout from 1000 to 3000 milliseconds" });
    else if (k.electionTimeoutMs > L.electionPerHeartbeat * k.heartbeatIntervalMs)
        out.push({
            key: "keyStoreElectionTimeoutMs",
            problem: `${k.electionTimeoutMs} ms is more than 10 times keyStoreHeartbeatIntervalMs (${k.heartbeatIntervalMs} ms)`,
            expected: `an election-timeout of at most ${L.electionPerHeartbeat * k.heartbeatIntervalMs} ms (10 x heartbeat-interval)`,
        });
    return out;
};

const nodeAgent: Rule = (c) => {
    const n = c.nodeAgent;
    const out: ConfigProblem[] = [];
    if (n.nodeStatusUpdateFrequency < 1 || n.nodeStatusUpdateFrequency >= NODE_MONITOR_GRACE_SECONDS)
        out.push({
            key: "nodeAgentNodeStatusUpdateFrequency",
            problem: `${n.nodeStatusUpdateFrequency} s does not fit in the 40 s after which a silent node is NotReady`,
            expected: "from 1 to 39 seconds (section 2.6: 10 s)",
        });
    if (n.nodeStatusReportFrequency < n.nodeStatusUpdateFrequency)
        out.push({ key: "nodeAgentNodeStatusReportFrequency", problem: `${n.nodeStatusReportFrequency} s is below nodeAgentNodeStatusUpdateFrequency`, expected: "at least the status update frequency" });
    for (const part of ["systemReserved", "kubeReserved"] as const) {
        const r = n[part];
        if (cpuMillis(r.cpu) <= 0) out.push({ key: keyOf(["nodeAgent", part, "cpu"]), problem: "reserves nothing", expected: "a cpu quantity above 0" });
        if (quantityBytes(r.memory) <= 0) out.push({ key: keyOf(["nodeAgent", part, "memory"]), problem: "reserves nothing", expected: "a memory quantity above 0" });
    }
    // A node must keep something allocatable after the node agent's reservations (npm run explain fits pods into it).
    const p = c.nodePool;
    const reservedCpu = cpuMillis(n.systemReserved.cpu) + cpuMillis(n.kubeReserved.cpu);
    const eviction = threshold(n.evictionHard.memoryAvailable, quantityBytes(p.memory));
    const reservedMemory = quantityBytes(n.systemReserved.memory) + quantityBytes(n.kubeReserved.memory) + eviction;
    if (cpuMillis(p.cpu) <= reservedCpu)
        out.push({ key: "nodePoolCpu", problem: `${p.cpu} leaves nothing after systemReserved + kubeReserved (${reservedCpu}m)`, expected: `a cpu quantity above ${reservedCpu}m` });
    if (quantityBytes(p.memory) <= reservedMemory)
        out.push({ key: "nodePoolMemory", problem: `${p.memory} leaves nothing after systemReserved + kubeReserved + evictionHard memory.available`, expected: `a memory quantity above ${Math.ceil(reservedMemory / 2 ** 20)}Mi` });
    return out;
};

/** An evictionHard threshold in bytes: a quantity, or a percentage of the node's capacity. */
const threshold = (value: string, capacity: number) => (value.endsWith("%") ? Math.ceil((capacity * Number(value.slice(0, -1))) / 100) : quantityBytes(value));
const mi = (bytes: number) => `${Math.ceil(bytes / 2 ** 20)}Mi`;

/**
 * The node's disk (nodefs): the node agent's reservations and eviction threshold leave room for
 * pods; every container's log files fit in its allowance (what the kubelet keeps: its files of its
 * rotation size); a container's ephemeral storage the configuration sizes (its logs and the backup
 * jobs' /tmp) fits on one node, or no node admits its pod.
 */
const nodeDisk: Rule = (c) => {
    const n = c.nodeAgent;
    const disk = quantityBytes(c.nodePool.ephemeralStorage);
    const reserved = quantityBytes(n.systemReserved.ephemeralStorage) + quantityBytes(n.kubeReserved.ephemeralStorage) + threshold(n.evictionHard.nodefsAvailable, disk);
    const out: ConfigProblem[] = [];
    const allocatable = disk - reserved;
    if (allocatable <= 0)
        out.push({
            key: "nodePoolEphemeralStorage",
            problem: `${c.nodePool.ephemeralStorage} leaves nothing for pods after nodeAgentSystemReservedEphemeralStorage ${n.systemReserved.ephemeralStorage} + nodeAgentKubeReservedEphemeralStorage ${n.kubeReserved.ephemeralStorage} + nodeAgentEvictionHardNodefsAvailable ${n.evictionHard.nodefsAvailable}`,
            expected: `a node disk above ${mi(reserved)}, or smaller reservations`,
        });
    const logs = quantityBytes(c.guardrails.containerLogStorage);
    const kept = quantityBytes(n.containerLogMaxSize) * n.containerLogMaxFiles;
    if (logs < kept)
        out.push({
            key: "guardrailsContainerLogStorage",
            problem: `${c.guardrails.containerLogStorage} is less than the node agent keeps of a container's logs (nodeAgentContainerLogMaxFiles ${n.containerLogMaxFiles} x nodeAgentContainerLogMaxSize ${n.containerLogMaxSize} = ${mi(kept)}): a container that logs steadily is evicted for exceeding its ephemeral-storage limit`,
            expected: `at least ${mi(kept)}, or fewer or smaller log files`,
        });
    if (allocatable > 0) {
        const tmp = quantityBytes(c.backups.job.tmpSize);
        if (logs > allocatable)
            out.push({ key: "guardrailsContainerLogStorage", problem: `${c.guardrails.containerLogStorage} is more than a node has for pods (${mi(allocatable)} of nodePoolEphemeralStorage ${c.nodePool.ephemeralStorage} after the reservations): no pod fits on a node`, expected: `at most ${mi(allocatable)}` });
        else if (logs + tmp > allocatable)
            out.push({ key: "backupsJobTmpSize", problem: `${c.backups.job.tmpSize} plus the log allowance ${c.guardrails.containerLogStorage} is more than a node has for pods (${mi(allocatable)} of nodePoolEphemeralStorage ${c.nodePool.ephemeralStorage} after the reservations): no backup job fits on a node`, expected: `at most ${mi(allocatable - logs)}` });
    }
    return out;
};

const acmeServer: Rule = (c) => {
    const want = c.environment.tier === "prod" ? ACME_PRODUCTION : ACME_STAGING;
    return c.issuers.acmeServer === want
        ? []
        : [{ key: "issuersAcmeServer", problem: `${c.issuers.acmeServer} is not the ${c.environment.tier === "prod" ? "production" : "staging"} server`, expected: `${want} in ${c.environment.tier}` }];
};

/** A workload a vertical or horizontal autoscaler targets. */
export interface WorkloadRef {
    kind: "Deployment" | "StatefulSet";
    namespace: string;
    name: string;
}

export const workloadKey = (w: WorkloadRef) => `${w.kind}/${w.namespace}/${w.name}`;

export function parseWorkloadRef(ref: string): WorkloadRef {
    const [kind, namespace, name] = ref.split("/");
    return { kind: kind as WorkloadRef["kind"], namespace, name };
}

/**
 * The workloads the program gives a horizontal autoscaler, derived from configuration. A test over
 * the whole render (test/platform.test.ts) fails when a rendered HorizontalPodAutoscaler is
 * missing here, so this list cannot drift from the components.
 */
export function horizontallyScaled(c: Config): WorkloadRef[] {
    return [
        { kind: "Deployment", namespace: c.agentServer.namespace, name: "model-bridge" },
        { kind: "StatefulSet", namespace: c.workflow.namespace, name: "workflow-worker" },
    ];
}

const verticalTargets: Rule = (c) => {
    const hpa = new Set(horizontallyScaled(c).map(workloadKey));
    const seen = new Set<string>();
    const out: ConfigProblem[] = [];
    for (const ref of c.verticalAutoscaling.targets) {
        if (seen.has(ref)) out.push({ key: "verticalAutoscalingTargets", problem: `${ref} is listed twice`, expected: "each workload once" });
        seen.add(ref);
        if (hpa.has(ref))
            out.push({
                key: "verticalAutoscalingTargets",
                problem: `${ref} already has a horizontal autoscaler; two autoscalers acting on the same pods' resources fight each other`,
                expected: "only workloads without a HorizontalPodAutoscaler",
            });
    }
    return out;
};

const knownHosts: Rule = (c) => {
    const host = repoHost(c.gitops.repoUrl);
    if (!host) return [];
    const covered = c.gitops.knownHosts.some((line) => line.split(/\s+/)[0].split(",").some((h) => h === host || h === `[${host}]:22` || h.startsWith(`[${host}]:`)));
    return covered ? [] : [{ key: "gitopsKnownHosts", problem: `no line for ${host}, the host of gitopsRepoUrl`, expected: `a known-hosts line "${host} <key-type> <public key>"` }];
};

/** The SSH host of a repository URL (undefined for HTTPS repositories). */
export function repoHost(repoUrl: string): string | undefined {
    const scp = /^[\w.-]+@([\w.-]+):/.exec(repoUrl);
    if (scp) return scp[1];
    if (repoUrl.startsWith("ssh://")) return new URL(repoUrl).hostname;
    return undefined;
}

export const QUOTA_RESOURCES = ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "requests.storage", "persistentvolumeclaims", "pods"] as const;

/** "<namespace>:<resource>=<quantity>" -> its parts, or a problem. */
export function parseQuotaOverride(entry: string): { namespace: string; resource: (typeof QUOTA_RESOURCES)[number]; quantity: string } | string {
    const m = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?):([a-z.]+)=(\S+)$/.exec(entry);
    if (!m) return `"${entry}" is not <namespace>:<resource>=<quantity>`;
    const resource = m[3] as (typeof QUOTA_RESOURCES)[number];
    if (!QUOTA_RESOURCES.includes(resource)) return `"${m[3]}" is not a quota resource (${QUOTA_RESOURCES.join(", ")})`;
    const q = m[4];
    const valid = resource.endsWith("cpu") ? /^(\d+m|\d+(\.\d{1,3})?)$/.test(q) : resource === "pods" || resource === "persistentvolumeclaims" ? /^\d+$/.test(q) : /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|Pi|Ei)?$/.test(q);
    if (!valid) return `"${q}" is not a valid quantity for ${resource}`;
    return { namespace: m[1], resource, quantity: q };
}

const quotaOverrides: Rule = (c) =>
    c.guardrails.quotaOverrides.flatMap((entry) => {
        const parsed = parseQuotaOverride(entry);
        return typeof parsed === "string" ? [{ key: "guardrailsQuotaOverrides", problem: parsed, expected: '"<namespace>:<resource>=<quantity>", e.g. "search:limits.memory=24Gi"' }] : [];
    });

const distinctChildNamespaces: Rule = (c) => {
    const g = c.gitops;
    const names = [g.uptimeMonitor.namespace, g.chatUi.namespace, g.dashboard.namespace];
    return new Set(names).size === names.length
        ? []
        : [{ key: "gitopsChatUiNamespace", problem: `the child applications share a namespace (${names.join(", ")})`, expected: "one namespace per child application (each gets its own guardrails and policies)" }];
};

/** The minimum cluster release: new enough for the fields the manifests use, not newer than the schemas they are checked against. */
const kubernetesMinVersion: Rule = (c) => {
    const v = c.environment.kubernetesMinVersion;
    if (minorOf(v) === undefined) return [];
    return compareVersions(v, OLDEST_SUPPORTED) < 0 || compareVersions(v, SCHEMA_VERSION) > 0
        ? [{ key: "environmentKubernetesMinVersion", problem: `${v} is outside ${OLDEST_SUPPORTED}..${SCHEMA_VERSION}`, expected: `a release from ${OLDEST_SUPPORTED} (lifecycle.preStop.sleep) to ${SCHEMA_VERSION} (the newest API schemas the manifests are checked against)` }]
        : [];
};

export const PLATFORM_RULES: Rule[] = [kubernetesMinVersion, keyStore, nodeAgent, nodeDisk, acmeServer, verticalTargets, knownHosts, quotaOverrides, distinctChildNamespaces];
