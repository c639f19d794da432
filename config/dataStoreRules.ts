/**
 * Cross-key rules of the data stores, the workflow tool and the backups.
 */
import type { ConfigProblem, Rule } from "./rule";
import { cronLongestGapDays, parseCron } from "./cron";
import { cpuMillis, flatten, quantityBytes } from "./schema";
import { schema } from "./stack";

/** In prod every StatefulSet of these areas runs with Guaranteed QoS (section 2.1): requests equal limits. */
const guaranteedInProd: Rule = (c) => {
    if (c.environment.tier !== "prod") return [];
    const stores = { postgres: c.postgres, redis: c.redis, objectStore: c.objectStore, workflowMain: c.workflow.main, workflowWorker: c.workflow.worker };
    return Object.entries(stores).flatMap(([key, s]) => [
        ...(cpuMillis(s.requests.cpu) !== cpuMillis(s.limits.cpu)
            ? [{ key: `${key}RequestsCpu`, problem: `${s.requests.cpu} differs from ${key}LimitsCpu ${s.limits.cpu} (prod StatefulSets need Guaranteed QoS)`, expected: `the same value as ${key}LimitsCpu` }]
            : []),
        ...(quantityBytes(s.requests.memory) !== quantityBytes(s.limits.memory)
            ? [{ key: `${key}RequestsMemory`, problem: `${s.requests.memory} differs from ${key}LimitsMemory ${s.limits.memory} (prod StatefulSets need Guaranteed QoS)`, expected: `the same value as ${key}LimitsMemory` }]
            : []),
    ]);
};

const redisMemory: Rule = (c) =>
    quantityBytes(c.redis.maxMemory) < quantityBytes(c.redis.limits.memory)
        ? []
        : [{ key: "redisMaxMemory", problem: `${c.redis.maxMemory} is not below the container limit ${c.redis.limits.memory}`, expected: "a maxmemory below redisLimitsMemory (room for the fork of a background save)" }];

const rbacNamespaces: Rule = (c) => {
    const ns = c.workflow.rbacNamespaces;
    return new Set(ns).size === 2 && ns.length === 2
        ? []
        : [{ key: "workflowRbacNamespaces", problem: `${JSON.stringify(ns)} is not two distinct namespaces`, expected: "exactly two distinct namespaces (section 5.7)" }];
};

const executionTimeouts: Rule = (c) =>
    c.workflow.executionsTimeout <= c.workflow.executionsTimeoutMax
        ? []
        : [{ key: "workflowExecutionsTimeout", problem: `${c.workflow.executionsTimeout} is above workflowExecutionsTimeoutMax ${c.workflow.executionsTimeoutMax}`, expected: "at most workflowExecutionsTimeoutMax" }];

const workerRange: Rule = (c) =>
    c.workflow.workerReplicas <= c.workflow.maxWorkerReplicas
        ? []
        : [{ key: "workflowWorkerReplicas", problem: `${c.workflow.workerReplicas} is above workflowMaxWorkerReplicas ${c.workflow.maxWorkerReplicas}`, expected: "at most workflowMaxWorkerReplicas" }];

/** A backup that may run longer than the time to the next one would be skipped by concurrencyPolicy Forbid. */
const backupDeadline: Rule = (c) =>
    c.backups.job.activeDeadline > 0
        ? []
        : [{ key: "backupsJobActiveDeadline", problem: "0 would kill every backup at once", expected: "a positive number of seconds" }];

/**
 * Every backup schedule (a `...Schedule` key of a backup area) runs at most backupsRetentionDays
 * apart: each successful run deletes the backups older than that (the scripts' RETENTION_DAYS),
 * so runs further apart would leave the newest backup alone, with nothing to fall back on.
 */
const backupsWithinRetention: Rule = (c) => {
    const days = c.backups.retentionDays;
    if (days === 0) return [];
    const out: ConfigProblem[] = [];
    for (const { key, path } of flatten(schema)) {
        if (!key.endsWith("Schedule") || !path.some((p) => /^backups?$/.test(p))) continue;
        const value = path.reduce<any>((n, p) => n?.[p], c);
        const parsed = typeof value === "string" ? parseCron(value) : "";
        const gap = typeof parsed === "string" ? undefined : cronLongestGapDays(parsed);
        if (gap !== undefined && gap > days)
            out.push({ key, problem: `"${value}" runs up to ${gap} days apart, but each successful run deletes the backups older than backupsRetentionDays (${days}): only the newest backup would be kept`, expected: `a schedule that runs at least every ${days} days, or backupsRetentionDays of at least ${gap}` });
    }
    return out;
};

/**
 * The folders backup and restore jobs mount besides the backup volume (components/lib/backupCronJob.ts:
 * the scripts, the deploy key and known hosts of the mirror job, the stores' data at /data;
 * test/mountPaths.test.ts fails when a rendered job mounts another). The API server refuses a
 * container with one mount path twice, and a volume mounted inside another hides part of it.
 */
export const BACKUP_JOB_MOUNTS = ["/data", "/scripts", "/ssh", "/ssh-known-hosts"] as const;

const nested = (a: string, b: string) => a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);

const backupMounts: Rule = (c) => {
    const out: ConfigProblem[] = [];
    const backup = c.backups.mountPath;
    for (const [other, what] of [[c.booking.dataMountPath, "bookingDataMountPath (the booking backup job mounts both)"], ...BACKUP_JOB_MOUNTS.map((m) => [m, `${m}, which backup and restore jobs mount`])] as const)
        if (nested(backup, other)) out.push({ key: "backupsMountPath", problem: `"${backup}" is or holds ${what === `${other}, which backup and restore jobs mount` ? what : `"${other}" of ${what}`}`, expected: `a folder apart from ${[c.booking.dataMountPath, ...BACKUP_JOB_MOUNTS].join(", ")}` });
    for (const m of BACKUP_JOB_MOUNTS.filter((x) => x !== "/data"))
        if (nested(c.booking.dataMountPath, m)) out.push({ key: "bookingDataMountPath", problem: `"${c.booking.dataMountPath}" is or holds ${m}, which the booking backup job also mounts`, expected: `a folder apart from ${BACKUP_JOB_MOUNTS.filter((x) => x !== "/data").join(", ")}` });
    return out;
};

export const DATA_STORE_RULES: Rule[] = [backupMounts, guaranteedInProd, redisMemory, rbacNamespaces, executionTimeouts, workerRange, backupDeadline, backupsWithinRetention];
