/**
 * The booking application (sections 2.11, 4.4, 5.11, 8.3): one replica writing a SQLite file on a
 * ReadWriteOnce volume, hence the Recreate strategy (the old pod releases the file and the volume
 * before the new one starts), no autoscaler and no disruption budget. The chat-notification robot
 * secret (webhook_url, sec_secret, revoke_secret) comes from secret config and exists only on the
 * cluster.
 *
 * Backup: a CronJob copies the live database with SQLite itself (backups/scripts/sqlite-backup.sh,
 * a transaction-consistent VACUUM INTO). SQLite cannot be read over the network, so the job mounts
 * the application's own volume; a ReadWriteOnce volume can be mounted by several pods of one node,
 * so the job is scheduled with required pod affinity to the booking pod's node. That was chosen
 * over a sidecar (a scheduler loop inside the application pod; changing it restarts the
 * application) and over `kubectl exec` (a service account allowed to exec into pods): the job is
 * an ordinary, hardened backup job built like every other one (components/lib/backupCronJob.ts).
 * It would not work with a ReadWriteOncePod volume. The restore must run while the application is
 * scaled to 0 (sqlite-restore.sh replaces the file under it), so it has no affinity:
 *   kubectl -n booking scale deployment/booking --replicas=0
 *   kubectl -n booking create job --from=cronjob/booking-backup-restore booking-backup-restore-$(date +%s)
 *   kubectl -n booking scale deployment/booking --replicas=1
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config";
import { backupCronJob, BackupCronJobArgs, BackupJobs, clientImage, scriptFile } from "./lib/backupCronJob";
import { hostOf, webIngress } from "./lib/ingress";
import { appLabels, reloaderAnnotations, SQLITE_STORAGE } from "./lib/labels";
import { allowOnly, ingressController, internet } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, PodArgs, scratch } from "./lib/pod";
import { protectedClaim } from "./lib/protectedClaim";
import { withoutSettlingWait } from "./lib/engineOrder";

export interface BookingArgs {
    config: StackConfig;
}

const APP = "booking";
/** The secret of the chat-notification robot (section 2.11) and its three keys. */
export const CHAT_SECRET = `${APP}-chat-notification`;
export const CHAT_KEYS = { webhookUrl: "webhook_url", secSecret: "sec_secret", revokeSecret: "revoke_secret" } as const;

/** Required affinity to the node of the pods with these labels (the volume is attached there). */
export function sameNodeAs(selector: Record<string, string>): k8s.types.input.core.v1.Affinity {
    return { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: selector }, topologyKey: "kubernetes.io/hostname" }] } };
}

export class Booking extends pulumi.ComponentResource {
    public readonly url: string;
    public readonly serviceName: string;
    public readonly backup: BackupJobs;

    constructor(name: string, args: BookingArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:Booking", name, {}, opts);
        const cfg = args.config;
        const b = cfg.booking;
        const ns = b.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "server", instance: APP });

        const chat = new k8s.core.v1.Secret(`${name}-chat`, {
            metadata: { name: CHAT_SECRET, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { [CHAT_KEYS.webhookUrl]: b.chat.webhookUrl, [CHAT_KEYS.secSecret]: b.chat.secSecret, [CHAT_KEYS.revokeSecret]: b.chat.revokeSecret },
        }, child);
        const data = protectedClaim(`${name}-data`, cfg, { name: `${APP}-data`, namespace: ns, labels: l.labels, size: b.dataVolumeSize, storageClass: b.storageClass }, child);
        new k8s.apps.v1.Deployment(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels, annotations: { ...reloaderAnnotations(cfg, { secrets: [CHAT_SECRET] }), ...SQLITE_STORAGE } },
            spec: {
                replicas: 1,
                // One writer of the SQLite file on a ReadWriteOnce volume: stop the old pod before the new one starts.
                strategy: { type: "Recreate" },
                selector: { matchLabels: l.selector },
                template: { metadata: { labels: l.labels }, spec: hardenedPodSpec(cfg, serverPod(cfg, chat, data)) },
            },
        }, { ...child, dependsOn: [chat] });
        const service = new k8s.core.v1.Service(name, {
            metadata: withoutSettlingWait({ name: APP, namespace: ns, labels: l.labels }),
            spec: { type: "ClusterIP", selector: l.selector, ports: [{ name: "http", port: b.port, targetPort: "http", protocol: "TCP" }] },
        }, child);
        webIngress(APP, cfg, { namespace: ns, hostLabel: b.host, serviceName: APP, servicePort: b.port, labels: l.labels }, { ...child, dependsOn: [service] });
        allowOnly(APP, {
            namespace: ns,
            podSelector: l.selector,
            labels: l.labels,
            ingress: [{ peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: b.port }] }],
            // The chat-notification robot's webhook is outside the cluster.
            egress: [{ peer: internet(), ports: [{ port: b.chat.webhookPort }] }],
        }, child);
        const backupName = `${APP}-backup`;
        this.backup = backupCronJob(backupName, cfg, backupArgs(cfg, data), {
            ...child,
            dependsOn: [data],
            // Only the backup needs the application's node; the restore runs with the application scaled to 0.
            transformations: [(t) => t.type === "kubernetes:batch/v1:CronJob" && t.name === backupName ? { props: withAffinity(t.props, sameNodeAs(l.selector)), opts: t.opts } : undefined],
        });

        this.url = `https://${hostOf(cfg, b.host)}`;
        this.serviceName = APP;
        this.registerOutputs({ url: this.url, restoreCommand: this.backup.restoreCommand });
    }
}

const databasePath = (cfg: StackConfig) => `${cfg.booking.dataMountPath.replace(/\/$/, "")}/${cfg.booking.databaseFile}`;

/** The application's pod: its SQLite file on the data volume, the robot's secret as env. */
function serverPod(cfg: StackConfig, chat: k8s.core.v1.Secret, data: k8s.core.v1.PersistentVolumeClaim): PodArgs {
    const b = cfg.booking;
    const fromChat = (env: string, key: string) => ({ name: env, valueFrom: { secretKeyRef: { name: chat.metadata.name, key } } });
    const tmp = scratch("tmp", "/tmp");
    return {
        terminationGracePeriodSeconds: b.terminationGracePeriod,
        fsGroup: b.runAsUser,
        containers: [hardenedContainer({
            name: "booking",
            image: b.image,
            args: b.args ? [...b.args] : undefined,
            ports: [{ name: "http", containerPort: b.port }],
            env: [
                { name: "PORT", value: String(b.port) },
                { name: "DATABASE_PATH", value: databasePath(cfg) },
                fromChat("CHAT_WEBHOOK_URL", CHAT_KEYS.webhookUrl),
                fromChat("CHAT_SEC_SECRET", CHAT_KEYS.secSecret),
                fromChat("CHAT_REVOKE_SECRET", CHAT_KEYS.revokeSecret),
            ],
            resources: b,
            runAsUser: b.runAsUser,
            livenessProbe: httpProbe(b.livenessPath, "http", b.liveness),
            readinessProbe: httpProbe(b.readinessPath, "http", b.readiness),
            preStopDelay: b.preStopDelay,
            volumeMounts: [{ name: "data", mountPath: b.dataMountPath }, tmp.mount],
        })],
        volumes: [{ name: "data", persistentVolumeClaim: { claimName: data.metadata.name } }, tmp.volume],
    };
}

/** A copy of the live database with SQLite itself, on the application's volume; the restore replaces the file. */
function backupArgs(cfg: StackConfig, data: k8s.core.v1.PersistentVolumeClaim): BackupCronJobArgs {
    const b = cfg.booking;
    const dataVolume = { volume: { name: "data", persistentVolumeClaim: { claimName: data.metadata.name } }, mount: { name: "data", mountPath: b.dataMountPath } };
    const sqlite = { env: { SQLITE_DB: databasePath(cfg) }, volumes: [dataVolume], egress: [], runAsUser: b.runAsUser };
    return {
        namespace: b.namespace,
        app: APP,
        schedule: b.backup.schedule,
        image: clientImage(cfg, "sqlite"),
        backup: { script: scriptFile("sqlite-backup.sh"), ...sqlite },
        restore: { script: scriptFile("sqlite-restore.sh"), ...sqlite },
        volumeSize: b.backup.volumeSize,
        fsGroup: b.runAsUser,
    };
}

function withAffinity(props: any, affinity: k8s.types.input.core.v1.Affinity): any {
    const spec = props.spec;
    const pod = spec.jobTemplate.spec.template;
    return { ...props, spec: { ...spec, jobTemplate: { ...spec.jobTemplate, spec: { ...spec.jobTemplate.spec, template: { ...pod, spec: { ...pod.spec, affinity } } } } } };
}
