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
import { backupCronJob, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, podsIn } from "./lib/network";
import { execProbe, hardenedContainer, hardenedPodSpec, scratch } from "./lib/pod";
import { statefulServices, StoreClient } from "./lib/statefulService";
import { keyOf } from "../config/schema";
import { ClaimGuard, growableStatefulSet } from "./lib/claimGrowth";

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
        this.host = services.host;
        this.port = p.port;

        const tmp = scratch("tmp", "/tmp");
        const run = scratch("run", "/var/run/postgresql", "16Mi");
        const fromSuperuser = (key: string) => ({ secretKeyRef: { name: superuser.metadata.name, key } });
        const stopFast = ["sh", "-c", `pg_ctl -D "${PGDATA}" -m fast -w stop`];
        const container = hardenedContainer({
            name: "postgres",
            image: p.image,
            runAsUser: POSTGRES_UID,
            ports: [{ name: "postgres", containerPort: p.port }],
            env: [
                { name: "POSTGRES_USER", valueFrom: fromSuperuser("username") },
                { name: "POSTGRES_PASSWORD", valueFrom: fromSuperuser("password") },
                { name: "PGDATA", value: PGDATA },
                { name: "PGPORT", value: String(p.port) },
            ],
            resources: p,
            livenessProbe: execProbe(["sh", "-c", `pg_isready -q -h 127.0.0.1 -p ${p.port} -U "$POSTGRES_USER"`], p.liveness),
            readinessProbe: execProbe(["sh", "-c", `pg_isready -q -h 127.0.0.1 -p ${p.port} -U "$POSTGRES_USER"`], p.readiness),
            // The kubelet sends SIGTERM, which PostgreSQL treats as a "smart" shutdown that waits for
            // every client to disconnect; a fast shutdown (checkpoint, then exit) fits the grace period.
            lifecycle: { preStop: { exec: { command: stopFast } } },
            volumeMounts: [
                { name: "data", mountPath: DATA_DIR },
                { name: "shm", mountPath: "/dev/shm" },
                tmp.mount,
                run.mount,
            ],
        });

        (container.securityContext as { runAsGroup?: number }).runAsGroup = POSTGRES_UID;

        const server = growableStatefulSet(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels, annotations: reloaderAnnotations(cfg, { secrets: [`${APP}-superuser`] }) },
            spec: {
                serviceName: services.headlessName,
                replicas: 1,
                selector: { matchLabels: l.selector },
                podManagementPolicy: "OrderedReady",
                updateStrategy: { type: "RollingUpdate" },
                template: {
                    metadata: { labels: l.labels },
                    spec: hardenedPodSpec(cfg, {
                        terminationGracePeriodSeconds: p.terminationGracePeriod,
                        fsGroup: POSTGRES_UID,
                        spreadSelector: l.selector,
                        containers: [container],
                        volumes: [{ name: "shm", emptyDir: { medium: "Memory", sizeLimit: p.sharedMemorySize } }, tmp.volume, run.volume],
                    }),
                },
                // Deleting or scaling down the StatefulSet never deletes its data.
                persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
                volumeClaimTemplates: [{
                    metadata: { name: "data", labels: l.labels },
                    spec: { accessModes: ["ReadWriteOnce"], storageClassName: cfg.dataStores.storageClass, resources: { requests: { storage: p.volumeSize } } },
                }],
            },
        }, { ...child, dependsOn: [superuser, services.headless] }, { data: keyOf(["postgres", "volumeSize"]) }, args.volumeGuard);

        this.readyForClients.push(server);

        // Application databases: one role + database each, the password in a Secret here (for the
        // provisioning Job) and one in the client's namespace (for the client).
        this.databaseSecrets = {};
        const provisionEnv: k8s.types.input.core.v1.EnvVar[] = [];
        const provisionList: string[] = [];
        args.databases.forEach((db, i) => {
            const pw = new random.RandomPassword(`${name}-db-${db.name}`, { length: p.passwordLength, special: false }, child);
            const local = new k8s.core.v1.Secret(`${name}-db-${db.name}`, {
                metadata: { name: `${APP}-db-${db.name}`, namespace: ns, labels: l.labels },
                type: "Opaque",
                stringData: { username: db.name, password: pw.result },
            }, child);
            const clientSecret = new k8s.core.v1.Secret(`${name}-client-${db.name}`, {
                metadata: { name: db.secretName, namespace: db.namespace, labels: l.labels },
                type: "Opaque",
                stringData: { username: db.name, password: pw.result },
            }, child);
            provisionEnv.push({ name: `DB_PASSWORD_${i}`, valueFrom: { secretKeyRef: { name: local.metadata.name, key: "password" } } });
            provisionList.push(`${db.name} DB_PASSWORD_${i}`);
            this.databaseSecrets[db.name] = { namespace: db.namespace, secretName: db.secretName };
            this.readyForClients.push(clientSecret);
        });

        const provisionLabels = appLabels(cfg, { name: APP, component: "provision", instance: `${APP}-provision` });
        const connectEnv = [
            { name: "PGHOST", value: services.host },
            { name: "PGPORT", value: String(p.port) },
            { name: "PGUSER", valueFrom: fromSuperuser("username") },
            { name: "PGPASSWORD", valueFrom: fromSuperuser("password") },
            { name: "PGDATABASE", value: "postgres" },
        ];
        if (args.databases.length > 0) {
            const script = new k8s.core.v1.ConfigMap(`${name}-provision`, {
                metadata: { name: `${APP}-provision`, namespace: ns, labels: provisionLabels.labels },
                data: { "provision.sh": PROVISION_SCRIPT, databases: provisionList.join("\n") + "\n" },
            }, child);
            const ptmp = scratch("tmp", "/tmp");
            this.readyForClients.push(new k8s.batch.v1.Job(`${name}-provision`, {
                metadata: { name: `${APP}-provision`, namespace: ns, labels: provisionLabels.labels },
                spec: {
                    backoffLimit: cfg.backups.job.backoffLimit + 4,
                    activeDeadlineSeconds: cfg.backups.job.activeDeadline,
                    template: {
                        metadata: { labels: provisionLabels.labels },
                        spec: hardenedPodSpec(cfg, {
                            restartPolicy: "OnFailure",
                            containers: [hardenedContainer({
                                name: "provision",
                                image: cfg.backups.postgresClientImage,
                                command: ["sh", "/provision/provision.sh"],
                                env: [...connectEnv, { name: "HOME", value: "/tmp" }, ...provisionEnv],
                                resources: cfg.backups.job,
                                volumeMounts: [{ name: "provision", mountPath: "/provision", readOnly: true }, ptmp.mount],
                            })],
                            volumes: [{ name: "provision", configMap: { name: script.metadata.name, defaultMode: 0o555 } }, ptmp.volume],
                        }),
                    },
                },
            }, { ...child, deleteBeforeReplace: true, dependsOn: [script] }));
            allowOnly(`${APP}-provision`, {
                namespace: ns, podSelector: provisionLabels.selector, labels: provisionLabels.labels, ingress: [],
                egress: [{ peer: podsIn(ns, l.selector, "PostgreSQL"), ports: [{ port: p.port }] }],
            }, child);
        }

        const toServer: Flow[] = [{ peer: podsIn(ns, l.selector, "PostgreSQL"), ports: [{ port: p.port }] }];
        const backupName = `${APP}-backup`;
        this.backup = backupCronJob(backupName, cfg, {
            namespace: ns,
            app: APP,
            schedule: cfg.backups.postgres.schedule,
            image: cfg.backups.postgresClientImage,
            volumeSize: cfg.backups.postgres.volumeSize,
            backup: { script: scriptFile("postgres-backup.sh"), secretEnv: secretEnvOf(superuser), env: plainEnvOf(services.host, p.port), egress: toServer },
            restore: { script: scriptFile("postgres-restore.sh"), secretEnv: secretEnvOf(superuser), env: plainEnvOf(services.host, p.port), egress: toServer },
        }, child);

        const clients = args.databases.flatMap((d) => d.clients);
        allowOnly(APP, {
            namespace: ns,
            podSelector: l.selector,
            labels: l.labels,
            ingress: [
                ...clients.map((c) => ({ peer: podsIn(c.namespace, c.selector, c.description), ports: [{ port: p.port }] })),
                { peer: podsIn(ns, this.backup.backupSelector, "the PostgreSQL backup job"), ports: [{ port: p.port }] },
                { peer: podsIn(ns, this.backup.restoreSelector, "the PostgreSQL restore job"), ports: [{ port: p.port }] },
                ...(args.databases.length > 0 ? [{ peer: podsIn(ns, provisionLabels.selector, "the database provisioning job"), ports: [{ port: p.port }] }] : []),
            ],
            egress: [],
        }, child);

        this.namespace = ns;
        this.headlessServiceName = services.headlessName;
        this.superuserSecretName = `${APP}-superuser`;
        this.selector = l.selector;
        this.registerOutputs({ host: this.host, port: this.port, superuserSecretName: this.superuserSecretName, databaseSecrets: this.databaseSecrets });
    }
}

const secretEnvOf = (superuser: k8s.core.v1.Secret) => ({
    PGUSER: { secretName: superuser.metadata.name, key: "username" },
    PGPASSWORD: { secretName: superuser.metadata.name, key: "password" },
});
const plainEnvOf = (host: string, port: number) => ({ PGHOST: host, PGPORT: String(port), PGDATABASE: "postgres" });

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
