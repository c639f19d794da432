/**
 * The workflow automation tool (n8n 1.68.0; sections 4.3, 5.7, 5.9, 8.2, 8.3) in queue mode: one
 * main process (editor, REST API, webhook intake, schedule triggers) and workers that run the
 * production executions (triggers, webhooks, schedules), on PostgreSQL (its own database and role,
 * created by the PostgreSQL provisioning Job) and Redis (the queue). Manual executions (started
 * from the editor) run on the main process: n8n 1.68 enqueues only non-manual executions
 * (WorkflowRunner.run) and has no setting to offload them.
 *
 * Every environment name is one n8n 1.68.0 reads (test/productDefinitions.test.ts checks them
 * against @n8n/config 1.18.0 and n8n's own config schema); docs/product-settings.md maps the
 * specification's WF_ names to them.
 *
 * Hosts: the editor on <workflowEditorHost>.<domain>, webhooks (/webhook/<path>) on the separate
 * <workflowWebhookHost>.<domain>; both Ingresses use proxy-read-timeout ingressWorkflowProxyReadTimeout.
 *
 * Invite links and OAuth callbacks use N8N_EDITOR_BASE_URL (the editor host); WEBHOOK_URL is the
 * webhook host.
 *
 * Kubernetes API: only the workers run production executions, so only they use the `workflow` service account
 * (bound by a Role in exactly the two namespaces of workflowRbacNamespaces) and mount its token;
 * the main process runs as `workflow-main`, which has no bindings and no token.
 *
 * Backup: the tool's CLI export of workflows and credentials (credentials stay encrypted) in its
 * own image, daily (backupsWorkflowSchedule); restore imports them (workflow-restore.sh). The
 * database itself is also in the PostgreSQL per-database dump at 03:00.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { cpuAutoscaler, disruptionBudget } from "./lib/availability";
import { AUTOSCALED_REPLICAS } from "./lib/fieldOwnership";
import { backupCronJob, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { hostOf, webIngress } from "./lib/ingress";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, ingressController, internet, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, Resources, scratch } from "./lib/pod";
import { statefulServices, StoreClient } from "./lib/statefulService";
import { keyOf } from "../config/schema";
import { ClaimGuard, growableStatefulSet } from "./lib/claimGrowth";

type EnvVar = k8s.types.input.core.v1.EnvVar;

export interface WorkflowArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
    postgres: { host: string; port: number; namespace: string; selector: Record<string, string>; database: string; secretName: string };
    redis: { host: string; port: number; namespace: string; selector: Record<string, string>; secretName: string };
}

const APP = "workflow";
/** The node user of the image; its files and the data volume belong to it. */
const WORKFLOW_UID = 1000;
const DATA_DIR = "/data";

/** Secrets the data stores create in the workflow namespace for the tool. */
export const workflowStoreSecrets = { postgres: `${APP}-postgres`, redis: `${APP}-redis` } as const;

const mainLabels = (cfg: StackConfig) => appLabels(cfg, { name: APP, component: "main", instance: `${APP}-main` });
const workerLabels = (cfg: StackConfig) => appLabels(cfg, { name: APP, component: "worker", instance: `${APP}-worker` });
const BACKUP_NAME = `${APP}-backup`;
const backupLabels = (cfg: StackConfig) => appLabels(cfg, { name: APP, component: "backup", instance: BACKUP_NAME });
const restoreLabels = (cfg: StackConfig) => appLabels(cfg, { name: APP, component: "restore", instance: `${BACKUP_NAME}-restore` });

/** The workflow tool's pods that connect to PostgreSQL: main, workers, export and import jobs. */
export function workflowDatabaseClients(cfg: StackConfig): StoreClient[] {
    const ns = cfg.workflow.namespace;
    return [
        { namespace: ns, selector: mainLabels(cfg).selector, description: "the workflow tool's main process" },
        { namespace: ns, selector: workerLabels(cfg).selector, description: "the workflow tool's workers" },
        { namespace: ns, selector: backupLabels(cfg).selector, description: "the workflow export job" },
        { namespace: ns, selector: restoreLabels(cfg).selector, description: "the workflow import job" },
    ];
}

/** The workflow tool's pods that use the Redis queue: main and workers. */
export function workflowQueueClients(cfg: StackConfig): StoreClient[] {
    const ns = cfg.workflow.namespace;
    return [
        { namespace: ns, selector: mainLabels(cfg).selector, description: "the workflow tool's main process" },
        { namespace: ns, selector: workerLabels(cfg).selector, description: "the workflow tool's workers" },
    ];
}

export class Workflow extends pulumi.ComponentResource {
    public readonly editorUrl: string;
    public readonly webhookUrl: string;
    public readonly namespace: string;
    public readonly serviceAccountName: string;
    public readonly mainSelector: Record<string, string>;
    public readonly workerSelector: Record<string, string>;
    public readonly backup: BackupJobs;

    constructor(name: string, args: WorkflowArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:Workflow", name, {}, opts);
        const cfg = args.config;
        const w = cfg.workflow;
        const ns = w.namespace;
        const child = { parent: this };
        const main = mainLabels(cfg);
        const worker = workerLabels(cfg);
        const common = appLabels(cfg, { name: APP, component: "tool", instance: APP });
        const editorHost = hostOf(cfg, w.editorHost);
        const webhookHost = hostOf(cfg, w.webhookHost);

        const encryptionKey = new random.RandomPassword(`${name}-encryption-key`, { length: w.encryptionKeyLength, special: false }, child);
        const encryption = new k8s.core.v1.Secret(`${name}-encryption`, {
            metadata: { name: `${APP}-encryption`, namespace: ns, labels: common.labels },
            type: "Opaque",
            stringData: { "encryption-key": encryptionKey.result },
        }, child);
        const external = new k8s.core.v1.Secret(`${name}-external`, {
            metadata: { name: `${APP}-external`, namespace: ns, labels: common.labels },
            type: "Opaque",
            stringData: { "gateway-token": w.gatewayToken, "model-api-key": w.modelApiKey },
        }, child);

        // Service accounts: `workflow` (workers; bound in two namespaces) and `workflow-main` (no rights).
        const workerAccount = new k8s.core.v1.ServiceAccount(`${name}-sa`, {
            metadata: { name: APP, namespace: ns, labels: common.labels },
            automountServiceAccountToken: false,
        }, child);
        const mainAccount = new k8s.core.v1.ServiceAccount(`${name}-main-sa`, {
            metadata: { name: `${APP}-main`, namespace: ns, labels: common.labels },
            automountServiceAccountToken: false,
        }, child);
        for (const target of w.rbacNamespaces) {
            const role = new k8s.rbac.v1.Role(`${name}-gitops-${target}`, {
                metadata: { name: `${APP}-gitops`, namespace: target, labels: common.labels },
                rules: RBAC_RULES,
            }, child);
            new k8s.rbac.v1.RoleBinding(`${name}-gitops-${target}`, {
                metadata: { name: `${APP}-gitops`, namespace: target, labels: common.labels },
                roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${APP}-gitops` },
                subjects: [{ kind: "ServiceAccount", name: APP, namespace: ns }],
            }, { ...child, dependsOn: [role, workerAccount] });
        }

        const secretRef = (secretName: pulumi.Input<string>, key: string) => ({ valueFrom: { secretKeyRef: { name: secretName, key } } });
        const sharedEnv = (poolSize: number): EnvVar[] => [
            { name: "DB_TYPE", value: "postgresdb" },
            { name: "DB_POSTGRESDB_HOST", value: args.postgres.host },
            { name: "DB_POSTGRESDB_PORT", value: String(args.postgres.port) },
            { name: "DB_POSTGRESDB_DATABASE", value: args.postgres.database },
            { name: "DB_POSTGRESDB_USER", ...secretRef(args.postgres.secretName, "username") },
            { name: "DB_POSTGRESDB_PASSWORD", ...secretRef(args.postgres.secretName, "password") },
            { name: "DB_POSTGRESDB_POOL_SIZE", value: String(poolSize) },
            { name: "EXECUTIONS_MODE", value: "queue" },
            { name: "EXECUTIONS_TIMEOUT", value: String(w.executionsTimeout) },
            { name: "EXECUTIONS_TIMEOUT_MAX", value: String(w.executionsTimeoutMax) },
            { name: "QUEUE_BULL_REDIS_HOST", value: args.redis.host },
            { name: "QUEUE_BULL_REDIS_PORT", value: String(args.redis.port) },
            { name: "QUEUE_BULL_REDIS_PASSWORD", ...secretRef(args.redis.secretName, "password") },
            { name: "QUEUE_BULL_REDIS_TIMEOUT_THRESHOLD", value: String(w.redisTimeoutThreshold) },
            { name: "QUEUE_HEALTH_CHECK_ACTIVE", value: "true" },
            { name: "QUEUE_HEALTH_CHECK_PORT", value: String(w.port) },
            { name: "N8N_CONCURRENCY_PRODUCTION_LIMIT", value: String(w.concurrencyProductionLimit) },
            { name: "N8N_ENCRYPTION_KEY", ...secretRef(encryption.metadata.name, "encryption-key") },
            { name: "N8N_PORT", value: String(w.port) },
            { name: "N8N_HOST", value: editorHost },
            { name: "N8N_PROTOCOL", value: "https" },
            // Invite links and OAuth callback URLs are built from this (UrlService.getInstanceBaseUrl).
            { name: "N8N_EDITOR_BASE_URL", value: `https://${editorHost}/` },
            { name: "WEBHOOK_URL", value: `https://${webhookHost}/` },
            // One reverse proxy (the ingress controller) in front: trust its X-Forwarded-For.
            { name: "N8N_PROXY_HOPS", value: "1" },
            { name: "N8N_USER_FOLDER", value: DATA_DIR },
            { name: "N8N_DIAGNOSTICS_ENABLED", value: "false" },
            { name: "HOME", value: DATA_DIR },
            { name: "GATEWAY_TOKEN", ...secretRef(external.metadata.name, "gateway-token") },
            { name: "MODEL_API_KEY", ...secretRef(external.metadata.name, "model-api-key") },
        ];
        const secretsUsed = [`${APP}-encryption`, `${APP}-external`, args.postgres.secretName, args.redis.secretName];

        const processContainer = (role: "main" | "worker", resources: Resources, poolSize: number, processArgs: string[]) => {
            const tmp = scratch("tmp", "/tmp", "1Gi");
            const container = hardenedContainer({
                name: role,
                image: w.image,
                args: processArgs,
                runAsUser: WORKFLOW_UID,
                ports: [{ name: "http", containerPort: w.port }],
                env: sharedEnv(poolSize),
                resources,
                livenessProbe: httpProbe("/healthz", "http", w.liveness),
                readinessProbe: httpProbe("/healthz/readiness", "http", w.readiness),
                preStopDelay: w.preStopDelay,
                volumeMounts: [{ name: "data", mountPath: DATA_DIR }, tmp.mount],
            });
            (container.securityContext as { runAsGroup?: number }).runAsGroup = WORKFLOW_UID;
            return { container, tmp };
        };

        // Main process: one replica (schedule triggers must fire once).
        const mainServices = statefulServices(`${name}-main`, { name: `${APP}-main`, namespace: ns, labels: main.labels, selector: main.selector, ports: [{ name: "http", port: w.port }] }, child);
        const m = processContainer("main", w.main, w.mainPoolSize, ["start"]);
        growableStatefulSet(`${name}-main`, {
            metadata: { name: `${APP}-main`, namespace: ns, labels: main.labels, annotations: reloaderAnnotations(cfg, { secrets: secretsUsed }) },
            spec: {
                serviceName: mainServices.headlessName,
                replicas: w.mainReplicas,
                selector: { matchLabels: main.selector },
                template: {
                    metadata: { labels: main.labels },
                    spec: hardenedPodSpec(cfg, {
                        serviceAccountName: mainAccount.metadata.name,
                        callsKubernetesApi: false,
                        fsGroup: WORKFLOW_UID,
                        terminationGracePeriodSeconds: w.terminationGracePeriod,
                        spreadSelector: main.selector,
                        containers: [m.container],
                        volumes: [m.tmp.volume],
                    }),
                },
                // Deleting or scaling down the StatefulSet never deletes its data.
                persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
                volumeClaimTemplates: [dataClaim(cfg, main.labels)],
            },
        }, { ...child, dependsOn: [encryption, external, mainServices.headless] }, { data: keyOf(["workflow", "volumeSize"]) }, args.volumeGuard);

        // Workers: run every execution, call the Kubernetes API with the bound service account.
        const workerServices = statefulServices(`${name}-worker`, { name: `${APP}-worker`, namespace: ns, labels: worker.labels, selector: worker.selector, ports: [{ name: "http", port: w.port }], headlessOnly: true }, child);
        const wk = processContainer("worker", w.worker, w.workerPoolSize, ["worker", `--concurrency=${w.workerConcurrency}`]);
        const workers = growableStatefulSet(`${name}-worker`, {
            metadata: { name: `${APP}-worker`, namespace: ns, labels: worker.labels, annotations: reloaderAnnotations(cfg, { secrets: secretsUsed }) },
            spec: {
                serviceName: workerServices.headlessName,
                replicas: w.workerReplicas,
                // Workers are interchangeable: start and stop them in parallel.
                podManagementPolicy: "Parallel",
                selector: { matchLabels: worker.selector },
                template: {
                    metadata: { labels: worker.labels },
                    spec: hardenedPodSpec(cfg, {
                        serviceAccountName: workerAccount.metadata.name,
                        callsKubernetesApi: true,
                        fsGroup: WORKFLOW_UID,
                        terminationGracePeriodSeconds: w.terminationGracePeriod,
                        spreadSelector: worker.selector,
                        containers: [wk.container],
                        volumes: [wk.tmp.volume],
                    }),
                },
                // Deleting or scaling down the StatefulSet never deletes its data.
                persistentVolumeClaimRetentionPolicy: { whenDeleted: "Retain", whenScaled: "Retain" },
                volumeClaimTemplates: [dataClaim(cfg, worker.labels)],
            },
        }, { ...child, ...AUTOSCALED_REPLICAS, dependsOn: [encryption, external, workerServices.headless] }, { data: keyOf(["workflow", "volumeSize"]) }, args.volumeGuard);
        cpuAutoscaler(`${APP}-worker`, {
            namespace: ns, labels: worker.labels, target: { kind: "StatefulSet", name: `${APP}-worker` },
            minReplicas: w.workerReplicas, maxReplicas: w.maxWorkerReplicas, cpuUtilization: w.workerCpuUtilization, scaleDownWindow: w.workerScaleDownWindow,
        }, { ...child, dependsOn: [workers] });
        disruptionBudget(`${APP}-worker`, { namespace: ns, labels: worker.labels, selector: worker.selector, replicas: w.workerReplicas }, child);

        // Two hosts: the editor, and the webhooks (only /webhook/...) on their own host.
        const ingressArgs = { namespace: ns, serviceName: `${APP}-main`, servicePort: w.port, labels: main.labels, readTimeout: cfg.ingress.workflowProxyReadTimeout };
        webIngress(`${APP}-editor`, cfg, { ...ingressArgs, hostLabel: w.editorHost }, { ...child, dependsOn: [mainServices.headless] });
        webIngress(`${APP}-webhook`, cfg, { ...ingressArgs, hostLabel: w.webhookHost, path: "/webhook" }, { ...child, dependsOn: [mainServices.headless] });

        // Network: ingress controller -> main; main and workers -> PostgreSQL, Redis, the model API; workers -> the API server.
        const toStores: Flow[] = [
            { peer: podsIn(args.postgres.namespace, args.postgres.selector, "PostgreSQL"), ports: [{ port: args.postgres.port }] },
            { peer: podsIn(args.redis.namespace, args.redis.selector, "Redis"), ports: [{ port: args.redis.port }] },
        ];
        const toModelApi: Flow = { peer: internet(), ports: [{ port: w.modelApiPort }] };
        allowOnly(`${APP}-main`, {
            namespace: ns, podSelector: main.selector, labels: main.labels,
            ingress: [{ peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: w.port }] }],
            egress: [...toStores, toModelApi],
        }, child);
        allowOnly(`${APP}-worker`, {
            namespace: ns, podSelector: worker.selector, labels: worker.labels,
            ingress: [],
            egress: [...toStores, toModelApi, { peer: apiServer(cfg.guardrails.apiServerCidr), ports: cfg.guardrails.apiServerPorts.map((port) => ({ port })) }],
        }, child);

        // Backup: CLI export of workflows and (encrypted) credentials, in the tool's image. WF_BACKUP_MODE,
        // WF_CLI and WF_EXPORT_CREDENTIALS are the backup script's own settings, not n8n's.
        const exportEnv = {
            WF_BACKUP_MODE: "cli",
            WF_CLI: "n8n",
            WF_EXPORT_CREDENTIALS: "true",
            DB_TYPE: "postgresdb",
            DB_POSTGRESDB_HOST: args.postgres.host,
            DB_POSTGRESDB_PORT: String(args.postgres.port),
            DB_POSTGRESDB_DATABASE: args.postgres.database,
            N8N_USER_FOLDER: "/tmp",
            N8N_DIAGNOSTICS_ENABLED: "false",
        };
        const exportSecrets = {
            DB_POSTGRESDB_USER: { secretName: args.postgres.secretName, key: "username" },
            DB_POSTGRESDB_PASSWORD: { secretName: args.postgres.secretName, key: "password" },
            N8N_ENCRYPTION_KEY: { secretName: encryption.metadata.name, key: "encryption-key" },
        };
        const toDatabase: Flow[] = [toStores[0]];
        this.backup = backupCronJob(BACKUP_NAME, cfg, {
            namespace: ns,
            app: APP,
            schedule: cfg.backups.workflow.schedule,
            image: w.image,
            volumeSize: cfg.backups.workflow.volumeSize,
            fsGroup: WORKFLOW_UID,
            // The tool's CLI boots the whole application: it needs a worker's memory, not a client tool's.
            resources: w.worker,
            backup: { script: scriptFile("workflow-backup.sh"), env: exportEnv, secretEnv: exportSecrets, egress: toDatabase, runAsUser: WORKFLOW_UID },
            restore: { script: scriptFile("workflow-restore.sh"), env: exportEnv, secretEnv: exportSecrets, egress: toDatabase, runAsUser: WORKFLOW_UID },
        }, child);

        this.editorUrl = `https://${editorHost}`;
        this.webhookUrl = `https://${webhookHost}/webhook`;
        this.namespace = ns;
        this.serviceAccountName = APP;
        this.mainSelector = main.selector;
        this.workerSelector = worker.selector;
        this.registerOutputs({ editorUrl: this.editorUrl, webhookUrl: this.webhookUrl });
    }
}

/**
 * Least privilege for "rights on applications and deployments" (section 5.7): read them (get,
 * list: sync and health status, rollout state) and patch them (an application's operation field
 * starts a sync, its refresh annotation a refresh; a deployment's template annotation restarts
 * it, spec.replicas scales it). No create, update, delete, watch or subresources.
 */
export const RBAC_RULES = [
    { apiGroups: ["argoproj.io"], resources: ["applications"], verbs: ["get", "list", "patch"] },
    { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "patch"] },
];

function apiServer(cidr: string) {
    return { description: "the Kubernetes API server", peers: [{ ipBlock: { cidr } }] };
}

function dataClaim(cfg: StackConfig, labels: Record<string, string>) {
    return {
        metadata: { name: "data", labels },
        spec: { accessModes: ["ReadWriteOnce"], storageClassName: cfg.dataStores.storageClass, resources: { requests: { storage: cfg.workflow.volumeSize } } },
    };
}
