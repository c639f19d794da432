/**
 * Backup and restore jobs of a data store (section 8.3), built one way for every component.
 *
 * `backupCronJob(name, cfg, args, opts)` creates, in the owning component's namespace:
 *   - PersistentVolumeClaim <name>            the backup volume, mounted at BACKUP_DIR (cfg.backups.mountPath)
 *   - ConfigMap <name>-scripts                backup.sh and restore.sh (scripts are not secret)
 *   - CronJob <name>                          runs `sh /scripts/backup.sh` on args.schedule, concurrencyPolicy
 *                                             Forbid, history limits / deadlines / backoff from cfg.backups.job
 *   - CronJob <name>-restore                  the restore, suspended (see below)
 *   - NetworkPolicy <name> / <name>-restore   no ingress; egress only to args.egress (and DNS)
 * Scripts come from the catalogue backups/scripts.ts (scriptFile(name)); a variable the catalogue marks
 * as a credential is refused as a plain env value. Every pod is hardened (non-root, read-only root file system with an emptyDir /tmp, no
 * service-account token, restartPolicy Never); credentials reach the script only as env from the
 * owning component's Secrets (secretKeyRef), never as literals. BACKUP_DIR and RETENTION_DAYS are
 * always set.
 *
 * How to restore: the restore is a suspended CronJob whose schedule can never fire (February 31st),
 * so it exists on the cluster, fully wired, and runs only on request:
 *     kubectl -n <ns> create job --from=cronjob/<name>-restore <name>-restore-$(date +%s)
 * The restore scripts restore the newest backup unless told otherwise. Their options
 * (RESTORE_FROM, RESTORE_DATABASE, ...) are read from an optional ConfigMap <name>-restore-options
 * that the operator creates for one run and deletes afterwards; it is not managed by this program:
 *     kubectl -n <ns> create configmap <name>-restore-options --from-literal=RESTORE_FROM=2026-01-31T030000Z
 * Nothing has to be edited in YAML, and unsuspending the CronJob by mistake still never runs it.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { backupScript, BackupScript } from "../../backups/scripts";
import type { StackConfig } from "../../config";
import { appLabels } from "./labels";
import { allowOnly, Flow } from "./network";
import { hardenedContainer, hardenedPodSpec, Resources, scratch } from "./pod";
import { protectedClaim } from "./protectedClaim";

type Volume = k8s.types.input.core.v1.Volume;
type VolumeMount = k8s.types.input.core.v1.VolumeMount;
type EnvVar = k8s.types.input.core.v1.EnvVar;

/** A script of the catalogue (backups/scripts.ts): its file name, its text and the credentials it reads. */
export type ScriptSource = Pick<BackupScript, "name" | "content" | "env"> & Partial<Pick<BackupScript, "secrets">>;

/** An environment variable filled from a key of one of the owning component's Secrets. */
export interface SecretEnv {
    secretName: pulumi.Input<string>;
    key: string;
}

/** A volume the job needs besides the backup volume and /tmp (e.g. the data volume for a restore). */
export interface ExtraVolume {
    volume: Volume;
    mount: VolumeMount;
}

export interface JobSide {
    script: ScriptSource;
    /** Plain (non-secret) environment of the script. */
    env?: Record<string, pulumi.Input<string>>;
    /** Secret environment of the script: name -> Secret key. */
    secretEnv?: Record<string, SecretEnv>;
    volumes?: ExtraVolume[];
    /** Whom the job talks to (the data store, an HTTP API); DNS is always allowed. */
    egress: Flow[];
    /** Defaults to the backup side's image. */
    image?: string;
    runAsUser?: number;
    runAsGroup?: number;
}

export interface BackupCronJobArgs {
    namespace: string;
    /** The application whose data is saved (the app.kubernetes.io/name label). */
    app: string;
    schedule: string;
    /** The client-tool image of the script (cfg.backups.*Image, or the application's own image). */
    image: string;
    backup: JobSide;
    restore: JobSide;
    /** Backup volume size (cfg.backups.<store>.volumeSize). */
    volumeSize: string;
    /** Overrides cfg.backups.job.requests/limits. */
    resources?: Resources;
    fsGroup?: number;
    /** Overrides cfg.backups.retentionDays. */
    retentionDays?: number;
}

export interface BackupJobs {
    cronJob: k8s.batch.v1.CronJob;
    restoreCronJob: k8s.batch.v1.CronJob;
    volumeClaim: k8s.core.v1.PersistentVolumeClaim;
    scripts: k8s.core.v1.ConfigMap;
    /** Pod labels of the backup jobs, for the data store's NetworkPolicy (ingress from its backup). */
    backupSelector: Record<string, string>;
    restoreSelector: Record<string, string>;
    /** `kubectl create job` command that runs the restore. */
    restoreCommand: string;
}

/** A schedule that never fires (there is no February 31st): the restore runs only when created by hand. */
export const NEVER = "0 0 31 2 *";

const SCRIPTS_DIR = "/scripts";

export function backupCronJob(name: string, cfg: StackConfig, args: BackupCronJobArgs, opts: pulumi.CustomResourceOptions): BackupJobs {
    const b = cfg.backups;
    const ns = args.namespace;
    const backupLabels = appLabels(cfg, { name: args.app, component: "backup", instance: name });
    const restoreLabels = appLabels(cfg, { name: args.app, component: "restore", instance: `${name}-restore` });

    const volumeClaim = protectedClaim(name, cfg, { name, namespace: ns, labels: backupLabels.labels, size: args.volumeSize, storageClass: b.storageClass }, opts);

    const scripts = new k8s.core.v1.ConfigMap(`${name}-scripts`, {
        metadata: { name: `${name}-scripts`, namespace: ns, labels: backupLabels.labels },
        data: { "backup.sh": args.backup.script.content, "restore.sh": args.restore.script.content },
    }, opts);

    const common = { cfg, args, scriptsName: scripts.metadata.name, claimName: volumeClaim.metadata.name };
    const cronJob = new k8s.batch.v1.CronJob(name, {
        metadata: { name, namespace: ns, labels: backupLabels.labels, annotations: { "ops/script": args.backup.script.name } },
        spec: {
            schedule: args.schedule,
            timeZone: b.timeZone,
            concurrencyPolicy: "Forbid",
            startingDeadlineSeconds: b.job.startingDeadline,
            successfulJobsHistoryLimit: b.job.successfulJobsHistoryLimit,
            failedJobsHistoryLimit: b.job.failedJobsHistoryLimit,
            jobTemplate: jobTemplate({ ...common, side: args.backup, file: "backup.sh", labels: backupLabels.labels, backupReadOnly: false }),
        },
    }, { ...opts, dependsOn: [volumeClaim, scripts] });

    const optionsConfigMap = `${name}-restore-options`;
    const restoreCronJob = new k8s.batch.v1.CronJob(`${name}-restore`, {
        metadata: {
            name: `${name}-restore`,
            namespace: ns,
            labels: restoreLabels.labels,
            annotations: {
                "ops/script": args.restore.script.name,
                "ops/how-to-run": `kubectl -n ${ns} create job --from=cronjob/${name}-restore ${name}-restore-<suffix>`,
                "ops/options-configmap": optionsConfigMap,
            },
        },
        spec: {
            schedule: NEVER,
            timeZone: b.timeZone,
            suspend: true,
            concurrencyPolicy: "Forbid",
            startingDeadlineSeconds: b.job.startingDeadline,
            successfulJobsHistoryLimit: b.job.successfulJobsHistoryLimit,
            failedJobsHistoryLimit: b.job.failedJobsHistoryLimit,
            jobTemplate: jobTemplate({ ...common, side: args.restore, file: "restore.sh", labels: restoreLabels.labels, backupReadOnly: true, optionsConfigMap }),
        },
    }, { ...opts, dependsOn: [volumeClaim, scripts] });

    allowOnly(name, { namespace: ns, podSelector: backupLabels.selector, labels: backupLabels.labels, ingress: [], egress: args.backup.egress }, opts);
    allowOnly(`${name}-restore`, { namespace: ns, podSelector: restoreLabels.selector, labels: restoreLabels.labels, ingress: [], egress: args.restore.egress }, opts);

    return {
        cronJob,
        restoreCronJob,
        volumeClaim,
        scripts,
        backupSelector: backupLabels.selector,
        restoreSelector: restoreLabels.selector,
        restoreCommand: `kubectl -n ${ns} create job --from=cronjob/${name}-restore ${name}-restore-$(date +%s)`,
    };
}

interface TemplateArgs {
    cfg: StackConfig;
    args: BackupCronJobArgs;
    side: JobSide;
    file: string;
    labels: Record<string, string>;
    scriptsName: pulumi.Input<string>;
    claimName: pulumi.Input<string>;
    /** Restores only read the backup volume. */
    backupReadOnly: boolean;
    optionsConfigMap?: string;
}

function jobTemplate(t: TemplateArgs): k8s.types.input.batch.v1.JobTemplateSpec {
    const { cfg, args, side } = t;
    const literal = Object.keys(side.env ?? {}).filter((n) => side.script.secrets?.includes(n));
    if (literal.length > 0)
        throw new Error(`backup job of ${args.app}: ${literal.join(", ")} of ${side.script.name} are credentials; pass them in secretEnv (a secretKeyRef), never as env literals`);
    const b = cfg.backups;
    const tmp = scratch("tmp", "/tmp", b.job.tmpSize);
    // The settings every job could take, each set only where the script reads it.
    const common: { name: string; value: string }[] = [
        { name: "RETENTION_DAYS", value: String(args.retentionDays ?? b.retentionDays) },
        { name: "CONNECT_WAIT_SECONDS", value: String(b.job.connectWait) },
    ];
    const env: EnvVar[] = [
        { name: "BACKUP_DIR", value: b.mountPath },
        ...common.filter((e) => side.script.env.includes(e.name)),
        { name: "HOME", value: "/tmp" },
        ...Object.entries(side.env ?? {}).map(([name, value]) => ({ name, value })),
        ...Object.entries(side.secretEnv ?? {}).map(([name, ref]) => ({ name, valueFrom: { secretKeyRef: { name: ref.secretName, key: ref.key } } })),
    ];
    // OpenSSH (git over ssh) needs a passwd entry for the UID: in the git image run as one that exists.
    const image = side.image ?? args.image;
    const runAsUser = side.runAsUser ?? (image === b.gitImage ? b.gitRunAsUser : undefined);
    const container = hardenedContainer({
        name: t.file.replace(/\.sh$/, ""),
        image,
        command: ["sh", `${SCRIPTS_DIR}/${t.file}`],
        env,
        envFrom: t.optionsConfigMap ? [{ configMapRef: { name: t.optionsConfigMap, optional: true } }] : undefined,
        resources: args.resources ?? b.job,
        runAsUser,
        preStopDelay: 0,
        volumeMounts: [
            { name: "scripts", mountPath: SCRIPTS_DIR, readOnly: true },
            { name: "backup", mountPath: b.mountPath, readOnly: t.backupReadOnly },
            tmp.mount,
            ...(side.volumes ?? []).map((v) => v.mount),
        ],
    });
    const pod = hardenedPodSpec(cfg, {
        restartPolicy: "Never",
        fsGroup: args.fsGroup,
        containers: [container],
        volumes: [
            { name: "scripts", configMap: { name: t.scriptsName, defaultMode: 0o555 } },
            { name: "backup", persistentVolumeClaim: { claimName: t.claimName, readOnly: t.backupReadOnly } },
            tmp.volume,
            ...(side.volumes ?? []).map((v) => v.volume),
        ],
    });
    if (runAsUser !== undefined || side.runAsGroup !== undefined) {
        pod.securityContext = {
            ...(pod.securityContext as object),
            runAsUser: runAsUser ?? (pod.securityContext as any).runAsUser,
            // the git UID keeps the pod's group (the backup volume's fsGroup files stay shared)
            runAsGroup: side.runAsGroup ?? side.runAsUser ?? (pod.securityContext as any).runAsGroup,
        };
    }
    return {
        metadata: { labels: t.labels },
        spec: {
            backoffLimit: b.job.backoffLimit,
            activeDeadlineSeconds: b.job.activeDeadline,
            template: { metadata: { labels: t.labels }, spec: pod },
        },
    };
}

/** The client-tool image for a script's image kind (as named in backups/scripts.ts). */
export function clientImage(cfg: StackConfig, kind: "postgres" | "redis" | "mc" | "sqlite" | "git" | "curl"): string {
    const b = cfg.backups;
    return { postgres: b.postgresClientImage, redis: b.redisClientImage, mc: b.mcImage, sqlite: b.sqliteImage, git: b.gitImage, curl: b.curlImage }[kind];
}

/** A script of the catalogue backups/scripts.ts by file name (throws for an unknown one). */
export function scriptFile(fileName: string): BackupScript {
    return backupScript(fileName);
}
