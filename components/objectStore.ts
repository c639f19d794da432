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
import { keyOf } from "../config/schema";
import { backupCronJob, BackupJobs, scriptFile, SecretEnv } from "./lib/backupCronJob";
import { appLabels } from "./lib/labels";
import { Flow, podsIn } from "./lib/network";
import { hardenedContainer, httpProbe, PodArgs, scratch } from "./lib/pod";
import { provisioningJob } from "./lib/provisioningJob";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload, StoreClient, storeIngress } from "./lib/statefulService";

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
        const ns = cfg.dataStores.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "object-store", instance: APP });

        const rootPassword = new random.RandomPassword(`${name}-root`, { length: o.passwordLength, special: false }, child);
        const root = new k8s.core.v1.Secret(`${name}-root`, {
            metadata: { name: `${APP}-root`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { "access-key": o.rootUser, "secret-key": rootPassword.result },
        }, child);
        const snapshotKey = snapshotClientKey(name, cfg, l.labels, child);
        const services = statefulServices(name, { name: APP, namespace: ns, labels: l.labels, selector: l.selector, ports: [{ name: "s3", port: o.port }] }, child);
        const server = statefulWorkload(name, cfg, {
            volumeGuard: args.volumeGuard, name: APP, namespace: ns, app: l, serviceName: services.headlessName, replicas: 1, rollingUpdate: true,
            reloadOn: { secrets: [`${APP}-root`] },
            pod: serverPod(cfg, root),
            data: { size: o.volumeSize, sizeKey: keyOf(["objectStore", "volumeSize"]), storageClass: cfg.dataStores.storageClass, retain: true },
        }, { ...child, dependsOn: [root, services.headless] });

        this.endpoint = `http://${services.host}:${o.port}`;
        this.buckets = [...new Set([...o.buckets, cfg.searchEngine.snapshot.s3.bucket])];
        const toServer: Flow[] = [{ peer: podsIn(ns, l.selector, "the object store"), ports: [{ port: o.port }] }];
        const rootEnv = { OBJECTSTORE_ACCESS_KEY: secretKey(root, "access-key"), OBJECTSTORE_SECRET_KEY: secretKey(root, "secret-key") };
        const provision = provisioningJob(`${name}-provision`, cfg, {
            namespace: ns, app: APP, image: cfg.backups.mcImage, egress: toServer, description: "the object store provisioning job",
            files: { "provision.sh": PROVISION_SCRIPT, "snapshot-policy.json": JSON.stringify(bucketPolicy(cfg.searchEngine.snapshot.s3.bucket), null, 2) + "\n" },
            env: provisionEnv(this.endpoint, this.buckets, rootEnv, snapshotKey.secret),
        }, child);
        const connect = { env: { OBJECTSTORE_URL: this.endpoint }, secretEnv: rootEnv, egress: toServer };
        this.backup = backupCronJob(`${APP}-backup`, cfg, {
            namespace: ns, app: APP, schedule: cfg.backups.objectStore.schedule, image: cfg.backups.mcImage, volumeSize: cfg.backups.objectStore.volumeSize,
            backup: { script: scriptFile("objectstore-backup.sh"), ...connect },
            restore: { script: scriptFile("objectstore-restore.sh"), ...connect },
        }, child);
        storeIngress(APP, { namespace: ns, app: l, port: o.port, title: "object store", clients: args.clients, backup: this.backup, provision: provision.client }, child);

        this.readyForClients.push(...snapshotKey.forSearchEngine, server, provision.job);
        this.namespace = ns;
        this.host = services.host;
        this.port = o.port;
        this.headlessServiceName = services.headlessName;
        this.rootSecretName = `${APP}-root`;
        this.selector = l.selector;
        this.registerOutputs({ endpoint: this.endpoint, rootSecretName: this.rootSecretName, buckets: this.buckets });
    }
}

const secretKey = (secret: k8s.core.v1.Secret, key: string) => ({ secretName: secret.metadata.name, key });

/**
 * The snapshot client's key: generated here unless the stack provides it to the search engine (the
 * search engine creates its Secret itself exactly when both keys are set); when generated, it is
 * also delivered as the Secret the search engine reads.
 */
function snapshotClientKey(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const o = cfg.objectStore;
    const s3 = cfg.searchEngine.snapshot.s3;
    const given = s3.accessKey && s3.secretKey ? { accessKey: s3.accessKey, secretKey: s3.secretKey } : undefined;
    const accessKey = given?.accessKey ?? new random.RandomString(`${name}-snapshot-access-key`, { length: 20, special: false, lower: false, upper: true, numeric: true }, opts).result;
    const secretKey = given?.secretKey ?? new random.RandomPassword(`${name}-snapshot-secret-key`, { length: o.passwordLength, special: false }, opts).result;
    const stringData = { "access-key": accessKey, "secret-key": secretKey };
    const secret = new k8s.core.v1.Secret(`${name}-snapshot-key`, { metadata: { name: `${APP}-snapshot-key`, namespace: cfg.dataStores.namespace, labels }, type: "Opaque", stringData }, opts);
    const forSearchEngine = given ? [] : [new k8s.core.v1.Secret(`${name}-search-client`, {
        metadata: { name: s3.credentialsSecret, namespace: cfg.searchEngine.namespace, labels },
        type: "Opaque",
        stringData,
    }, opts)];
    return { secret, forSearchEngine };
}

/** The server's pod: MinIO serving DATA_DIR, its web console off. */
function serverPod(cfg: StackConfig, root: k8s.core.v1.Secret): Omit<PodArgs, "spreadSelector"> {
    const o = cfg.objectStore;
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
    return { terminationGracePeriodSeconds: o.terminationGracePeriod, containers: [container], volumes: [tmp.volume] };
}

/** The provisioning script's settings: where the store is, the buckets, the policy, the root and snapshot keys. */
function provisionEnv(endpoint: string, buckets: string[], rootEnv: Record<string, SecretEnv>, snapshotKey: k8s.core.v1.Secret): k8s.types.input.core.v1.EnvVar[] {
    const fromSecret = (ref: SecretEnv) => ({ valueFrom: { secretKeyRef: { name: ref.secretName, key: ref.key } } });
    return [
        { name: "OBJECTSTORE_URL", value: endpoint },
        { name: "BUCKETS", value: buckets.join(" ") },
        { name: "SNAPSHOT_POLICY", value: SNAPSHOT_POLICY },
        { name: "HOME", value: "/tmp" },
        ...Object.entries(rootEnv).map(([name, ref]) => ({ name, ...fromSecret(ref) })),
        { name: "SNAPSHOT_ACCESS_KEY", ...fromSecret(secretKey(snapshotKey, "access-key")) },
        { name: "SNAPSHOT_SECRET_KEY", ...fromSecret(secretKey(snapshotKey, "secret-key")) },
    ];
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
