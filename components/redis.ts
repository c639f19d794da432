/**
 * Redis 7 with persistence (AOF and RDB snapshots) as a one-pod StatefulSet behind a headless
 * Service; the workflow tool's queue. The password is generated; it reaches the server through
 * an included config file in a Secret (never a command-line argument) and the clients through a
 * Secret in their namespace. maxmemory-policy is noeviction: a queue must never lose jobs silently.
 *
 * Backup (section 8.3): BGSAVE, then the RDB file is copied to the backup volume (redis-backup.sh).
 * Restore: scale the StatefulSet to 0, run the restore job (it mounts the data volume and puts the
 * dump back as the AOF base when appendonly is on), scale back to 1.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { keyOf, quantityBytes } from "../config/schema";
import { backupCronJob, BackupCronJobArgs, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { appLabels } from "./lib/labels";
import { Flow, podsIn } from "./lib/network";
import { execProbe, hardenedContainer, PodArgs } from "./lib/pod";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload, StoreClient, storeIngress } from "./lib/statefulService";

export interface RedisArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
    clients: StoreClient[];
    /** Secrets (key password) created in the clients' namespaces. */
    credentialSecrets: { namespace: string; secretName: string }[];
}

const APP = "redis";
/** The uid/gid of the redis user in the official image. */
const REDIS_UID = 999;
const DATA_DIR = "/data";
/**
 * The file in the data folder that the running server holds a lock on (flock): the restore's sign
 * that Redis is stopped, which no network policy engine can blur. While a restore holds it, a
 * starting server waits for it.
 */
export const SERVER_LOCK = ".redis-server.lock";
/** The server's command: take the lock on fd 9, then exec redis-server, which keeps fd 9 (and the lock) while it runs. */
export function serverCommand(dataDir: string, configFile: string): string[] {
    const start = 'exec 9>>"$1" || exit 1; flock -n 9 || { echo "waiting for the restore that holds $1" >&2; flock 9 || exit 1; }; exec redis-server "$2"';
    return ["sh", "-c", start, "redis-server", `${dataDir}/${SERVER_LOCK}`, configFile];
}

export class Redis extends pulumi.ComponentResource {
    public readonly namespace: string;
    public readonly host: string;
    public readonly port: number;
    public readonly headlessServiceName: string;
    public readonly passwordSecretName: string;
    public readonly selector: Record<string, string>;
    public readonly backup: BackupJobs;
    /** What a client waits for: the server ready and its credentials Secret. */
    public readonly readyForClients: pulumi.Resource[] = [];

    constructor(name: string, args: RedisArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:data:Redis", name, {}, opts);
        const cfg = args.config;
        const r = cfg.redis;
        const ns = cfg.dataStores.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "cache", instance: APP });

        const password = new random.RandomPassword(`${name}-password`, { length: r.passwordLength, special: false }, child);
        const auth = new k8s.core.v1.Secret(`${name}-auth`, {
            metadata: { name: `${APP}-auth`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { password: password.result, "auth.conf": pulumi.interpolate`requirepass ${password.result}\n` },
        }, child);
        const clientSecrets = args.credentialSecrets.map((c) => new k8s.core.v1.Secret(`${name}-client-${c.namespace}`, {
            metadata: { name: c.secretName, namespace: c.namespace, labels: l.labels },
            type: "Opaque",
            stringData: { password: password.result },
        }, child));
        const conf = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${APP}-config`, namespace: ns, labels: l.labels },
            data: { "redis.conf": redisConf(cfg) },
        }, child);
        const services = statefulServices(name, { name: APP, namespace: ns, labels: l.labels, selector: l.selector, ports: [{ name: "redis", port: r.port }] }, child);
        const server = statefulWorkload(name, cfg, {
            volumeGuard: args.volumeGuard, name: APP, namespace: ns, app: l, serviceName: services.headlessName, replicas: 1, rollingUpdate: true,
            reloadOn: { configMaps: [`${APP}-config`], secrets: [`${APP}-auth`] },
            pod: serverPod(cfg, auth, conf),
            data: { size: r.volumeSize, sizeKey: keyOf(["redis", "volumeSize"]), storageClass: cfg.dataStores.storageClass, retain: true },
        }, { ...child, dependsOn: [auth, conf, services.headless] });

        const toServer: Flow[] = [{ peer: podsIn(ns, l.selector, "Redis"), ports: [{ port: r.port }] }];
        this.backup = backupCronJob(`${APP}-backup`, cfg, backupArgs(cfg, services.host, auth, toServer), child);
        storeIngress(APP, { namespace: ns, app: l, port: r.port, title: "Redis", clients: args.clients, backup: this.backup }, child);

        this.readyForClients.push(...clientSecrets, server);
        this.namespace = ns;
        this.host = services.host;
        this.port = r.port;
        this.headlessServiceName = services.headlessName;
        this.passwordSecretName = `${APP}-auth`;
        this.selector = l.selector;
        this.registerOutputs({ host: this.host, port: this.port, passwordSecretName: this.passwordSecretName });
    }
}

/** The server's pod: redis-server, holding the server lock, with the generated config and the password's include file. */
function serverPod(cfg: StackConfig, auth: k8s.core.v1.Secret, conf: k8s.core.v1.ConfigMap): Omit<PodArgs, "spreadSelector"> {
    const r = cfg.redis;
    const ping = `redis-cli -h 127.0.0.1 -p ${r.port} ping`;
    const container = hardenedContainer({
        name: "redis",
        image: r.image,
        runAsUser: REDIS_UID,
        runAsGroup: REDIS_UID,
        command: serverCommand(DATA_DIR, "/etc/redis/redis.conf"),
        ports: [{ name: "redis", containerPort: r.port }],
        env: [{ name: "REDISCLI_AUTH", valueFrom: { secretKeyRef: { name: auth.metadata.name, key: "password" } } }],
        resources: r,
        // Loading a large AOF answers LOADING: alive, not ready.
        livenessProbe: execProbe(["sh", "-c", `${ping} | grep -Eq 'PONG|LOADING'`], r.liveness),
        readinessProbe: execProbe(["sh", "-c", `${ping} | grep -q PONG`], r.readiness),
        preStopDelay: cfg.dataStores.preStopDelay,
        volumeMounts: [
            { name: "data", mountPath: DATA_DIR },
            { name: "config", mountPath: "/etc/redis", readOnly: true },
            { name: "auth", mountPath: "/etc/redis-auth", readOnly: true },
        ],
    });
    return {
        // SIGTERM makes Redis write a final snapshot before exiting.
        terminationGracePeriodSeconds: r.terminationGracePeriod,
        fsGroup: REDIS_UID,
        containers: [container],
        volumes: [
            { name: "config", configMap: { name: conf.metadata.name, defaultMode: 0o444 } },
            { name: "auth", secret: { secretName: auth.metadata.name, defaultMode: 0o440, items: [{ key: "auth.conf", path: "auth.conf" }] } },
        ],
    };
}

/** BGSAVE and copy for the backup; the restore puts the dump back on the data volume while Redis is down. */
function backupArgs(cfg: StackConfig, host: string, auth: k8s.core.v1.Secret, toServer: Flow[]): BackupCronJobArgs {
    const r = cfg.redis;
    const connect = { REDIS_HOST: host, REDIS_PORT: String(r.port) };
    return {
        namespace: cfg.dataStores.namespace,
        app: APP,
        schedule: cfg.backups.redis.schedule,
        image: cfg.backups.redisClientImage,
        volumeSize: cfg.backups.redis.volumeSize,
        fsGroup: REDIS_UID,
        backup: {
            script: scriptFile("redis-backup.sh"),
            env: { ...connect, REDIS_PERSISTENCE_MODE: "rdb" },
            secretEnv: { REDISCLI_AUTH: { secretName: auth.metadata.name, key: "password" } },
            // In the redis group, so that the restore (the redis user) reads the folder and files
            // (0750/0640): its read-only mount of the backup volume gets no fsGroup change.
            runAsGroup: REDIS_UID,
            egress: toServer,
        },
        restore: {
            script: scriptFile("redis-restore.sh"),
            // The server's lock (and REDIS_HOST) let the script refuse to run while Redis is up.
            env: { ...connect, REDIS_DATA_DIR: DATA_DIR, REDIS_SERVER_LOCK: SERVER_LOCK, REDIS_PERSISTENCE_MODE: r.appendOnly ? "aof" : "rdb" },
            volumes: [{
                volume: { name: "redis-data", persistentVolumeClaim: { claimName: `data-${APP}-0` } },
                mount: { name: "redis-data", mountPath: DATA_DIR },
            }],
            runAsUser: REDIS_UID,
            egress: toServer,
        },
    };
}

export function redisConf(cfg: StackConfig): string {
    const r = cfg.redis;
    return [
        `port ${r.port}`,
        "bind * -::*",
        // Authentication is on (requirepass in the included file); protected mode would only refuse remote clients.
        "protected-mode no",
        `dir ${DATA_DIR}`,
        `save ${r.rdbSavePoints}`,
        `appendonly ${r.appendOnly ? "yes" : "no"}`,
        `appendfsync ${r.appendFsync}`,
        `maxmemory ${quantityBytes(r.maxMemory)}`,
        "maxmemory-policy noeviction",
        "include /etc/redis-auth/auth.conf",
        "",
    ].join("\n");
}
