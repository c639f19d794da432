import { cpu, int, memory, oneOf, quantityOrPercent, seconds, storage, str } from "../schema";

const DURATION = { pattern: /^\d+[smh]$/, expected: 'a duration such as "30s", "10m" or "1h"' };

/**
 * The node agent's configuration (sections 2.1, 2.6, 8.1): a KubeletConfiguration file for the
 * node provisioning; it cannot be applied through the Kubernetes API. Checked in config/rules.ts,
 * published as a stack output and rendered to node/kubelet-config.yaml.
 */
export const nodeAgent = {
    cgroupDriver: oneOf("the node agent's control-group driver (systemd recommended)", ["systemd", "cgroupfs"] as const, "systemd"),
    systemReserved: {
        cpu: cpu("systemReserved cpu (operating system daemons)", "500m"),
        memory: memory("systemReserved memory", "512Mi"),
        ephemeralStorage: storage("systemReserved ephemeral-storage", "1Gi"),
    },
    kubeReserved: {
        cpu: cpu("kubeReserved cpu (node agent and container runtime)", "500m"),
        memory: memory("kubeReserved memory", "512Mi"),
        ephemeralStorage: storage("kubeReserved ephemeral-storage", "1Gi"),
    },
    evictionHard: {
        memoryAvailable: quantityOrPercent("evictionHard memory.available (a quantity or a percentage)", "100Mi"),
        nodefsAvailable: quantityOrPercent("evictionHard nodefs.available (a quantity or a percentage)", "10%"),
    },
    /** The kubelet rotates a container's log at this size and keeps this many files (kubelet v1.36 defaults: 10Mi, 5). */
    containerLogMaxSize: memory("containerLogMaxSize: the size at which the node agent rotates a container's log file (kubelet default 10Mi)", "10Mi"),
    containerLogMaxFiles: int("containerLogMaxFiles: the log files the node agent keeps per container (kubelet default 5; it refuses 1 or fewer)", 5, { min: 2, max: 100 }),
    nodeStatusUpdateFrequency: seconds("nodeStatusUpdateFrequency: how often the node agent posts its status (section 2.6: 10 s)", 10, 300),
    nodeStatusReportFrequency: seconds("nodeStatusReportFrequency: the longest interval between status reports (section 8.1: 10 s heartbeat)", 10, 3600),
};

/**
 * The worker nodes of the stack's cluster (count and size): what `npm run explain` fits the
 * workloads into, after the node agent's reservations above. Rendered to node/pool.yaml.
 */
export const nodePool = {
    count: int("worker nodes of the stack's cluster", 3, { min: 1, max: 1000, unit: "nodes" }),
    cpu: cpu("cpu capacity of one worker node", "8"),
    memory: memory("memory capacity of one worker node", "32Gi"),
    ephemeralStorage: storage("disk (nodefs) capacity of one worker node: the containers' ephemeral-storage requests are fitted into it after the node agent's reservations and evictionHard nodefs.available", "100Gi"),
};

/**
 * The key store's flags (section 8.1): rendered to node/etcd.env for the control-plane nodes and
 * checked against the specification's ranges in config/rules.ts.
 */
export const keyStore = {
    quotaBackendBytes: int("quota-backend-bytes (default 2 GB; production 8 to 16 GiB, 8589934592 = 8 GiB)", 8589934592, { min: 1, unit: "bytes" }),
    autoCompactionMode: oneOf("auto-compaction-mode", ["periodic"] as const, "periodic"),
    autoCompactionRetention: str("auto-compaction-retention of the periodic mode (e.g. 10m or 30m)", "10m", DURATION),
    heartbeatIntervalMs: int("heartbeat-interval in milliseconds (100 to 300)", 100, { min: 1, unit: "milliseconds" }),
    electionTimeoutMs: int("election-timeout in milliseconds (1000 to 3000, at most 10 times the heartbeat)", 1000, { min: 1, unit: "milliseconds" }),
    snapshotCount: int("snapshot-count (default 100000)", 100000, { min: 1 }),
};

/** Alert thresholds of the nodes and the key store (section 6.4). */
export const alerts = {
    nodeNotReadyFor: str("for: of KubeNodeNotReady (a node is NotReady after 40 s and evicted after 300 s)", "5m", DURATION),
    kubeletDownFor: str("for: of KubeletDown", "5m", DURATION),
    keyStoreFor: str("for: of the key-store alerts on latency, leader changes and size", "10m", DURATION),
    noLeaderFor: str("for: of the key-store alert on a member without a leader", "1m", DURATION),
    walFsyncP99Ms: int("etcd_disk_wal_fsync_duration_seconds 99th percentile above which an alert fires (section 6.4: 25 ms)", 25, { min: 1, max: 10000, unit: "milliseconds" }),
    backendCommitP99Ms: int("etcd_disk_backend_commit_duration_seconds 99th percentile above which an alert fires", 25, { min: 1, max: 10000, unit: "milliseconds" }),
    leaderChangesPerHour: int("leader changes in one hour (etcd_server_leader_changes_seen_total) above which an alert fires", 3, { min: 0, max: 1000 }),
    dbSizeQuotaPercent: int("key-store size as a percent of quota-backend-bytes above which an alert fires", 80, { min: 1, max: 99, unit: "percent" }),
};
