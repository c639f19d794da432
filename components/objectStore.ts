/**
 * The S3-compatible object store (MinIO) as a one-pod StatefulSet behind a headless Service.
 * Its client is the search engine (snapshot repository of type s3, section 2.10): a provisioning
 * Job creates the buckets and a user whose policy reaches only the snapshot bucket; that user's
 * key is delivered as the Secret the search engine reads (searchEngineSnapshotS3CredentialsSecret),
 * unless the stack sets the key itself (searchEngineSnapshotS3AccessKey / SecretKey).
 *
 * Backup (section 8.3): `mc mirror` of every bucket into a dated folder daily at 04:00;
 * restore: reverse mirror (objectstore-restore.sh).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { backupCronJob, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, scratch } from "./lib/pod";
import { statefulServices, StoreClient } from "./lib/statefulService";
import { keyOf } from "../config/schema";
import { ClaimGuard, growableStatefulSet } from "./lib/claimGrowth";

export interface ObjectStoreArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
    /** Pods allowed to use the S3 API (the search engine). */
    clients: StoreClient[];
}

const APP = "object-store";
const DATA_DIR = "/data";
const SNAPSHOT_POLICY = "search-snapshots-rw";

export class ObjectStore extends pulumi.ComponentResource {
    public readonly namespace: string;
    public readonly host: string;
    public readonly port: number;
    /** http://<host>:<port>, the S3 endpoint inside the cluster. */
    public readonly endpoint: string;
    public readonly headlessServiceName: string;
    public readonly rootSecretName: string;
    public readonly selector: Record<string, string>;
    public readonly buckets: string[];
    public readonly backup: BackupJobs;
    /** What a client waits for: the server ready, its buckets made, the search engine's credentials Secret (when generated here). */
    public readonly readyForClients: pulumi.Resource[] = [];

    constructor(name: string, args: ObjectStoreArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:data:ObjectStore", name, {}, opts);
        const cfg = args.config;
        const o = cfg.objectStore;
        const s3 = cfg.searchEngine.snapshot.s3;
        const ns = cfg.dataStores.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "object-store", instance: APP });
        this.buckets = [...new Set([...o.buckets, s3.bucket])];

        const rootPassword = new random.RandomPassword(`${name}-root`, { length: o.passwordLength, special: false }, child);
        const root = new k8s.core.v1.Secret(`${name}-root`, {
            metadata: { name: `${APP}-root`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { "access-key": o.rootUser, "secret-key": rootPassword.result },
        }, child);

        // The snapshot client's key: generated here unless the stack provides it to the search engine.
        // (the search engine creates its Secret itself exactly when both keys are set)
        const given = s3.accessKey && s3.secretKey ? { accessKey: s3.accessKey, secretKey: s3.secretKey } : undefined;
        const generateSnapshotKey = given === undefined;
        const accessKey = given?.accessKey ?? new random.RandomString(`${name}-snapshot-access-key`, { length: 20, special: false, lower: false, upper: true, numeric: true }, child).result;
        const secretKey = given?.secretKey ?? new random.RandomPassword(`${name}-snapshot-secret-key`, { length: o.passwordLength, special: false }, child).result;
        const snapshotKey = new k8s.core.v1.Secret(`${name}-snapshot-key`, {
            metadata: { name: `${APP}-snapshot-key`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { "access-key": accessKey, "secret-key": secretKey },
        }, child);
        if (generateSnapshotKey) {
            this.readyForClients.push(new k8s.core.v1.Secret(`${name}-search-client`, {
                metadata: { name: s3.credentialsSecret, namespace: cfg.searchEngine.namespace, labels: l.labels },
                type: "Opaque",
                stringData: { "access-key": accessKey, "secret-key": secretKey },
            }, child));
        }

        const services = statefulServices(name, { name: APP, namespace: ns, labels: l.labels, selector: l.selector, ports: [{ name: "s3", port: o.port }] }, child);
        const tmp = scratch("tmp", "/tmp");
        const fromRoot = (key: string) => ({ secretKeyRef: { name: root.metadata.name, key } });
        const container = hardenedContainer({
            name: "object-store",
            image: o.image,
            args: ["server", DATA_DIR, "--address", `:${o.port}`, "--certs-dir", "/tmp/certs"],
            ports: [{ name: "s3", containerPort: o.port }],
            env: [
                { name: "MINIO_ROOT_USER", valueFrom: fromRoot("access-key") },
                { name: "MINIO_ROOT_PASSWORD", valueFrom: fromRoot("secret-key") },
                // The web console is off: nothing outside the namespace needs it and no flow is opened for it.
                { name: "MINIO_BROWSER", value: "off" },
                { name: "HOME", value: "/tmp" },
            ],
            resources: o,
            livenessProbe: httpProbe("/minio/health/live", "s3", o.liveness),
            readinessProbe: httpProbe("/minio/health/ready", "s3", o.readiness),
            preStopDelay: cfg.dataStores.preStopDelay,
            volumeMounts: [{ name: "data", mountPath: DATA_DIR }, tmp.mount],
        });

        this.readyForClients.push(growableStatefulSet(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels, annotations: reloaderAnnotations(cfg, { secrets: [`${APP}-root`] }) },
            spec: {
                serviceName: services.headlessName,
                replicas: 1,
                selector: { matchLabels: l.selector },
                updateStrategy: { type: "RollingUpdate" },
                template: {
                    metadata: { labels: l.labels },
                    spec: hardenedPodSpec(cfg, {
                        terminationGracePeriodSeconds: o.terminationGracePeriod,
                        spreadSelector: l.selector,
                        containers: [container],
                        volumes: [tmp.volume],
                    }),
                },
                // Deleting or scaling down the StatefulSet never deletes its data.
                persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
                volumeClaimTemplates: [{
                    metadata: { name: "data", labels: l.labels },
                    spec: { accessModes: ["ReadWriteOnce"], storageClassName: cfg.dataStores.storageClass, resources: { requests: { storage: o.volumeSize } } },
                }],
            },
        }, { ...child, dependsOn: [root, services.headless] }, { data: keyOf(["objectStore", "volumeSize"]) }, args.volumeGuard));

        this.host = services.host;
        this.port = o.port;
        this.endpoint = `http://${services.host}:${o.port}`;
        const toServer: Flow[] = [{ peer: podsIn(ns, l.selector, "the object store"), ports: [{ port: o.port }] }];
        const rootEnv = {
            OBJECTSTORE_ACCESS_KEY: { secretName: root.metadata.name, key: "access-key" },
            OBJECTSTORE_SECRET_KEY: { secretName: root.metadata.name, key: "secret-key" },
        };

        // Provisioning: buckets, the snapshot policy limited to the snapshot bucket, the snapshot user.
        const provisionLabels = appLabels(cfg, { name: APP, component: "provision", instance: `${APP}-provision` });
        const provision = new k8s.core.v1.ConfigMap(`${name}-provision`, {
            metadata: { name: `${APP}-provision`, namespace: ns, labels: provisionLabels.labels },
            data: { "provision.sh": PROVISION_SCRIPT, "snapshot-policy.json": JSON.stringify(bucketPolicy(s3.bucket), null, 2) + "\n" },
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
                            image: cfg.backups.mcImage,
                            command: ["sh", "/provision/provision.sh"],
                            env: [
                                { name: "OBJECTSTORE_URL", value: this.endpoint },
                                { name: "BUCKETS", value: this.buckets.join(" ") },
                                { name: "SNAPSHOT_POLICY", value: SNAPSHOT_POLICY },
                                { name: "HOME", value: "/tmp" },
                                ...Object.entries(rootEnv).map(([n, r]) => ({ name: n, valueFrom: { secretKeyRef: { name: r.secretName, key: r.key } } })),
                                { name: "SNAPSHOT_ACCESS_KEY", valueFrom: { secretKeyRef: { name: snapshotKey.metadata.name, key: "access-key" } } },
                                { name: "SNAPSHOT_SECRET_KEY", valueFrom: { secretKeyRef: { name: snapshotKey.metadata.name, key: "secret-key" } } },
                            ],
                            resources: cfg.backups.job,
                            volumeMounts: [{ name: "provision", mountPath: "/provision", readOnly: true }, ptmp.mount],
                        })],
                        volumes: [{ name: "provision", configMap: { name: provision.metadata.name, defaultMode: 0o555 } }, ptmp.volume],
                    }),
                },
            },
        }, { ...child, deleteBeforeReplace: true, dependsOn: [provision] }));
        allowOnly(`${APP}-provision`, { namespace: ns, podSelector: provisionLabels.selector, labels: provisionLabels.labels, ingress: [], egress: toServer }, child);

        const backupName = `${APP}-backup`;
        this.backup = backupCronJob(backupName, cfg, {
            namespace: ns,
            app: APP,
            schedule: cfg.backups.objectStore.schedule,
            image: cfg.backups.mcImage,
            volumeSize: cfg.backups.objectStore.volumeSize,
            backup: { script: scriptFile("objectstore-backup.sh"), env: { OBJECTSTORE_URL: this.endpoint }, secretEnv: rootEnv, egress: toServer },
            restore: { script: scriptFile("objectstore-restore.sh"), env: { OBJECTSTORE_URL: this.endpoint }, secretEnv: rootEnv, egress: toServer },
        }, child);

        allowOnly(APP, {
            namespace: ns,
            podSelector: l.selector,
            labels: l.labels,
            ingress: [
                ...args.clients.map((c) => ({ peer: podsIn(c.namespace, c.selector, c.description), ports: [{ port: o.port }] })),
                { peer: podsIn(ns, this.backup.backupSelector, "the object store backup job"), ports: [{ port: o.port }] },
                { peer: podsIn(ns, this.backup.restoreSelector, "the object store restore job"), ports: [{ port: o.port }] },
                { peer: podsIn(ns, provisionLabels.selector, "the object store provisioning job"), ports: [{ port: o.port }] },
            ],
            egress: [],
        }, child);

        this.namespace = ns;
        this.headlessServiceName = services.headlessName;
        this.rootSecretName = `${APP}-root`;
        this.selector = l.selector;
        this.registerOutputs({ endpoint: this.endpoint, rootSecretName: this.rootSecretName, buckets: this.buckets });
    }
}

/** Read and write on one bucket only (IAM policy JSON as MinIO understands it). */
function bucketPolicy(bucket: string) {
    return {
        Version: "2012-10-17",
        Statement: [
            { Effect: "Allow", Action: ["s3:GetBucketLocation", "s3:ListBucket", "s3:ListBucketMultipartUploads"], Resource: [`arn:aws:s3:::${bucket}`] },
            { Effect: "Allow", Action: ["s3:GetObject", "s3:PutObject", "s3:DeleteObject", "s3:AbortMultipartUpload", "s3:ListMultipartUploadParts"], Resource: [`arn:aws:s3:::${bucket}/*`] },
        ],
    };
}

/**
 * Idempotent: buckets are created when missing, the policy is (re)written, the user is (re)created
 * with the current key and the policy attached. Credentials go through MC_HOST_<alias> in the
 * environment, never an mc config file on disk or a log line; the snapshot user's keys reach
 * `mc admin user add` on its standard input (mc reads them there when they are not arguments), so
 * the secret key is never on a command line. The access key names the user in `policy attach`.
 * Re-attaching an attached policy is MinIO's "already in effect" error, which is accepted; any
 * other failure stops the job.
 */
const PROVISION_SCRIPT = `#!/bin/sh
set -eu
log() { printf '%s [object-store-provision] %s\\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$*"; }
export MC_CONFIG_DIR=/tmp/mc
proto=\${OBJECTSTORE_URL%%://*}
hostport=\${OBJECTSTORE_URL#*://}
export MC_HOST_store="$proto://$OBJECTSTORE_ACCESS_KEY:$OBJECTSTORE_SECRET_KEY@$hostport"
until mc --quiet ready store > /dev/null 2>&1; do log "waiting for the object store at $OBJECTSTORE_URL"; sleep 3; done
for b in $BUCKETS; do
  log "ensuring bucket $b"
  mc --quiet mb --ignore-existing "store/$b"
done
log "writing policy $SNAPSHOT_POLICY"
mc --quiet admin policy create store "$SNAPSHOT_POLICY" /provision/snapshot-policy.json
log "ensuring the snapshot user and its policy"
printf '%s\\n%s\\n' "$SNAPSHOT_ACCESS_KEY" "$SNAPSHOT_SECRET_KEY" | mc --quiet admin user add store > /dev/null
if ! out=$(mc --quiet admin policy attach store "$SNAPSHOT_POLICY" --user "$SNAPSHOT_ACCESS_KEY" 2>&1); then
  case $out in
    *"already in effect"*) log "policy already attached" ;;
    *) log "attaching policy $SNAPSHOT_POLICY failed: $out"; exit 1 ;;
  esac
fi
log "done"
`;
