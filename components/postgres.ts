/**
 * PostgreSQL 15 (section 2.2 StatefulSet behind a headless Service; section 8.3 backups): one
 * pod with its data volume, a generated superuser password, the application databases of its
 * clients, and the daily full-cluster + per-database dump with its restore.
 *
 * Application databases and roles: a provisioning Job (psql as the superuser) creates each role
 * and database when missing and (re)sets the role's password from its Secret. It is idempotent,
 * so it is safe on a fresh volume, on an existing cluster and after a restore; the image's
 * /docker-entrypoint-initdb.d bootstrap is not used because it runs only on an empty data directory.
 * Each client gets its credentials as a Secret in its own namespace (keys username, password).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { keyOf } from "../config/schema";
import { backupCronJob, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { appLabels } from "./lib/labels";
import { Flow, podsIn } from "./lib/network";
import { execProbe, hardenedContainer, PodArgs, scratch } from "./lib/pod";
import { provisioningJob } from "./lib/provisioningJob";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload, StoreClient, storeIngress } from "./lib/statefulService";

export interface DatabaseRequest {
    /** Database name; the owning role has the same name. */
    name: string;
    /** Where its credentials Secret is created (the client's namespace). */
    namespace: string;
    /** Name of that Secret (keys username, password). */
    secretName: string;
    clients: StoreClient[];
}

export interface PostgresArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
    databases: DatabaseRequest[];
}

const APP = "postgres";
/** The uid/gid of the postgres user in the official image; the data directory must belong to it. */
const POSTGRES_UID = 999;
const DATA_DIR = "/var/lib/postgresql/data";
const PGDATA = `${DATA_DIR}/pgdata`;

export class Postgres extends pulumi.ComponentResource {
    public readonly namespace: string;
    /** Client Service DNS name and port. */
    public readonly host: string;
    public readonly port: number;
    public readonly headlessServiceName: string;
    public readonly superuserSecretName: string;
    public readonly selector: Record<string, string>;
    /** Per database: the Secret (in the client's namespace) with its username and password. */
    public readonly databaseSecrets: Record<string, { namespace: string; secretName: string }>;
    public readonly backup: BackupJobs;
    /** What a client waits for: the server ready, its database provisioned, its credentials Secret. */
    public readonly readyForClients: pulumi.Resource[] = [];

    constructor(name: string, args: PostgresArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:data:Postgres", name, {}, opts);
        const cfg = args.config;
        const p = cfg.postgres;
        const ns = cfg.dataStores.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "database", instance: APP });

        const superPassword = new random.RandomPassword(`${name}-superuser`, { length: p.passwordLength, special: false }, child);
        const superuser = new k8s.core.v1.Secret(`${name}-superuser`, {
            metadata: { name: `${APP}-superuser`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { username: p.superuser, password: superPassword.result },
        }, child);
        const services = statefulServices(name, { name: APP, namespace: ns, labels: l.labels, selector: l.selector, ports: [{ name: "postgres", port: p.port }] }, child);
        const server = statefulWorkload(name, cfg, {
            volumeGuard: args.volumeGuard, name: APP, namespace: ns, app: l, serviceName: services.headlessName, replicas: 1, podManagementPolicy: "OrderedReady", rollingUpdate: true,
            reloadOn: { secrets: [`${APP}-superuser`] },
            pod: serverPod(cfg, superuser),
            data: { size: p.volumeSize, sizeKey: keyOf(["postgres", "volumeSize"]), storageClass: cfg.dataStores.storageClass, retain: true },
        }, { ...child, dependsOn: [superuser, services.headless] });

        const databases = args.databases.map((db, i) => applicationDatabase(name, cfg, db, i, l.labels, child));
        const toServer: Flow[] = [{ peer: podsIn(ns, l.selector, "PostgreSQL"), ports: [{ port: p.port }] }];
        const provision = databases.length === 0 ? undefined : provisioningJob(`${name}-provision`, cfg, {
            namespace: ns, app: APP, image: cfg.backups.postgresClientImage, egress: toServer, description: "the database provisioning job",
            files: { "provision.sh": PROVISION_SCRIPT, databases: databases.map((d) => d.line).join("\n") + "\n" },
            env: [...superuserEnv(superuser, services.host, p.port), { name: "HOME", value: "/tmp" }, ...databases.map((d) => d.passwordEnv)],
        }, child);
        const connect = { env: plainEnvOf(services.host, p.port), secretEnv: secretEnvOf(superuser) };
        this.backup = backupCronJob(`${APP}-backup`, cfg, {
            namespace: ns, app: APP, schedule: cfg.backups.postgres.schedule, image: cfg.backups.postgresClientImage, volumeSize: cfg.backups.postgres.volumeSize,
            backup: { script: scriptFile("postgres-backup.sh"), ...connect, egress: toServer },
            restore: { script: scriptFile("postgres-restore.sh"), ...connect, egress: toServer },
        }, child);
        const clients = args.databases.flatMap((d) => d.clients);
        storeIngress(APP, { namespace: ns, app: l, port: p.port, title: "PostgreSQL", clients, backup: this.backup, provision: provision?.client }, child);

        this.readyForClients.push(server, ...databases.map((d) => d.clientSecret), ...(provision ? [provision.job] : []));
        this.namespace = ns;
        this.host = services.host;
        this.port = p.port;
        this.headlessServiceName = services.headlessName;
        this.superuserSecretName = `${APP}-superuser`;
        this.selector = l.selector;
        this.databaseSecrets = Object.fromEntries(args.databases.map((db) => [db.name, { namespace: db.namespace, secretName: db.secretName }]));
        this.registerOutputs({ host: this.host, port: this.port, superuserSecretName: this.superuserSecretName, databaseSecrets: this.databaseSecrets });
    }
}

/** The server's pod: PostgreSQL as the image's postgres user, its data directory on the data volume. */
function serverPod(cfg: StackConfig, superuser: k8s.core.v1.Secret): Omit<PodArgs, "spreadSelector"> {
    const p = cfg.postgres;
    const tmp = scratch("tmp", "/tmp");
    const run = scratch("run", "/var/run/postgresql", "16Mi");
    const fromSuperuser = (key: string) => ({ secretKeyRef: { name: superuser.metadata.name, key } });
    const ready = ["sh", "-c", `pg_isready -q -h 127.0.0.1 -p ${p.port} -U "$POSTGRES_USER"`];
    const container = hardenedContainer({
        name: "postgres",
        image: p.image,
        runAsUser: POSTGRES_UID,
        runAsGroup: POSTGRES_UID,
        ports: [{ name: "postgres", containerPort: p.port }],
        env: [
            { name: "POSTGRES_USER", valueFrom: fromSuperuser("username") },
            { name: "POSTGRES_PASSWORD", valueFrom: fromSuperuser("password") },
            { name: "PGDATA", value: PGDATA },
            { name: "PGPORT", value: String(p.port) },
        ],
        resources: p,
        livenessProbe: execProbe(ready, p.liveness),
        readinessProbe: execProbe(ready, p.readiness),
        // The kubelet sends SIGTERM, which PostgreSQL treats as a "smart" shutdown that waits for
        // every client to disconnect; a fast shutdown (checkpoint, then exit) fits the grace period.
        lifecycle: { preStop: { exec: { command: ["sh", "-c", `pg_ctl -D "${PGDATA}" -m fast -w stop`] } } },
        volumeMounts: [{ name: "data", mountPath: DATA_DIR }, { name: "shm", mountPath: "/dev/shm" }, tmp.mount, run.mount],
    });
    return {
        terminationGracePeriodSeconds: p.terminationGracePeriod,
        fsGroup: POSTGRES_UID,
        containers: [container],
        volumes: [{ name: "shm", emptyDir: { medium: "Memory", sizeLimit: p.sharedMemorySize } }, tmp.volume, run.volume],
    };
}

/**
 * One application database: its role's password, in a Secret here (for the provisioning Job) and
 * one in the client's namespace (for the client), and the Job's line and env for it.
 */
function applicationDatabase(name: string, cfg: StackConfig, db: DatabaseRequest, index: number, labels: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const ns = cfg.dataStores.namespace;
    const passwordVar = `DB_PASSWORD_${index}`;
    const pw = new random.RandomPassword(`${name}-db-${db.name}`, { length: cfg.postgres.passwordLength, special: false }, opts);
    const local = new k8s.core.v1.Secret(`${name}-db-${db.name}`, {
        metadata: { name: `${APP}-db-${db.name}`, namespace: ns, labels },
        type: "Opaque",
        stringData: { username: db.name, password: pw.result },
    }, opts);
    const clientSecret = new k8s.core.v1.Secret(`${name}-client-${db.name}`, {
        metadata: { name: db.secretName, namespace: db.namespace, labels },
        type: "Opaque",
        stringData: { username: db.name, password: pw.result },
    }, opts);
    return { clientSecret, line: `${db.name} ${passwordVar}`, passwordEnv: { name: passwordVar, valueFrom: { secretKeyRef: { name: local.metadata.name, key: "password" } } } };
}

const secretEnvOf = (superuser: k8s.core.v1.Secret) => ({
    PGUSER: { secretName: superuser.metadata.name, key: "username" },
    PGPASSWORD: { secretName: superuser.metadata.name, key: "password" },
});
const plainEnvOf = (host: string, port: number) => ({ PGHOST: host, PGPORT: String(port), PGDATABASE: "postgres" });
/** The same connection as the superuser, as the provisioning Job's env. */
const superuserEnv = (superuser: k8s.core.v1.Secret, host: string, port: number): k8s.types.input.core.v1.EnvVar[] => [
    { name: "PGHOST", value: host },
    { name: "PGPORT", value: String(port) },
    { name: "PGUSER", valueFrom: { secretKeyRef: { name: superuser.metadata.name, key: "username" } } },
    { name: "PGPASSWORD", valueFrom: { secretKeyRef: { name: superuser.metadata.name, key: "password" } } },
    { name: "PGDATABASE", value: "postgres" },
];

/**
 * Creates each listed role and database when missing and sets the role's password; safe to run
 * again. Lines of /provision/databases: "<name> <env var holding the password>".
 */
const PROVISION_SCRIPT = `#!/bin/sh
set -eu
log() { printf '%s [postgres-provision] %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
until pg_isready -q; do log "waiting for PostgreSQL at $PGHOST:$PGPORT"; sleep 3; done
while read -r db var; do
  [ -n "$db" ] || continue
  eval "PROVISION_PASSWORD=\\\${$var:?password variable $var is not set}"
  export PROVISION_PASSWORD
  log "ensuring role and database '$db'"
  # The password reaches psql through its environment (\\getenv), never on a command line.
  psql -X -q -v ON_ERROR_STOP=1 -v db="$db" <<'SQL'
\\getenv pw PROVISION_PASSWORD
SELECT format('CREATE ROLE %I LOGIN', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = :'db') \\gexec
ALTER ROLE :"db" WITH LOGIN PASSWORD :'pw';
SELECT format('CREATE DATABASE %I OWNER %I', :'db', :'db') WHERE NOT EXISTS (SELECT 1 FROM pg_database WHERE datname = :'db') \\gexec
ALTER DATABASE :"db" OWNER TO :"db";
REVOKE ALL ON DATABASE :"db" FROM PUBLIC;
GRANT ALL ON DATABASE :"db" TO :"db";
SQL
done < /provision/databases
log "done"
`;
