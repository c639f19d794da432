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
import { backupCronJob, BackupCronJobArgs, BackupJobs, scriptFile } from "./lib/backupCronJob";
import { hostOf, webIngress } from "./lib/ingress";
import { appLabels } from "./lib/labels";
import { allowOnly, Flow, ingressController, internet, podsIn } from "./lib/network";
import { hardenedContainer, httpProbe, PodArgs, scratch } from "./lib/pod";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload, StoreClient } from "./lib/statefulService";
import { keyOf } from "../config/schema";

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

        const { encryption, external } = toolSecrets(name, cfg, common.labels, child);
        const accounts = serviceAccounts(name, cfg, common.labels, child);
        const both = { namespace: ns, volumeGuard: args.volumeGuard, reloadOn: { secrets: [`${APP}-encryption`, `${APP}-external`, args.postgres.secretName, args.redis.secretName] }, data: dataVolume(cfg) };

        // Main process: one replica (schedule triggers must fire once).
        const mainServices = statefulServices(`${name}-main`, { name: `${APP}-main`, namespace: ns, labels: main.labels, selector: main.selector, ports: [{ name: "http", port: w.port }] }, child);
        statefulWorkload(`${name}-main`, cfg, {
            ...both, name: `${APP}-main`, app: main, serviceName: mainServices.headlessName, replicas: w.mainReplicas,
            pod: processPod(cfg, "main", toolEnv(cfg, args, { encryption, external }, w.mainPoolSize), accounts.main),
        }, { ...child, dependsOn: [encryption, external, mainServices.headless] });

        // Workers: run every execution, call the Kubernetes API with the bound service account; interchangeable, so started and stopped in parallel.
        const workerServices = statefulServices(`${name}-worker`, { name: `${APP}-worker`, namespace: ns, labels: worker.labels, selector: worker.selector, ports: [{ name: "http", port: w.port }], headlessOnly: true }, child);
        const workers = statefulWorkload(`${name}-worker`, cfg, {
            ...both, name: `${APP}-worker`, app: worker, serviceName: workerServices.headlessName, replicas: w.workerReplicas, podManagementPolicy: "Parallel",
            pod: processPod(cfg, "worker", toolEnv(cfg, args, { encryption, external }, w.workerPoolSize), accounts.worker),
        }, { ...child, ...AUTOSCALED_REPLICAS, dependsOn: [encryption, external, workerServices.headless] });
        cpuAutoscaler(`${APP}-worker`, {
            namespace: ns, labels: worker.labels, target: { kind: "StatefulSet", name: `${APP}-worker` },
            minReplicas: w.workerReplicas, maxReplicas: w.maxWorkerReplicas, cpuUtilization: w.workerCpuUtilization, scaleDownWindow: w.workerScaleDownWindow,
        }, { ...child, dependsOn: [workers] });
        disruptionBudget(`${APP}-worker`, { namespace: ns, labels: worker.labels, selector: worker.selector, replicas: w.workerReplicas }, child);

        // Two hosts: the editor, and the webhooks (only /webhook/...) on their own host.
        const ingressArgs = { namespace: ns, serviceName: `${APP}-main`, servicePort: w.port, labels: main.labels, readTimeout: cfg.ingress.workflowProxyReadTimeout };
        webIngress(`${APP}-editor`, cfg, { ...ingressArgs, hostLabel: w.editorHost }, { ...child, dependsOn: [mainServices.headless] });
        webIngress(`${APP}-webhook`, cfg, { ...ingressArgs, hostLabel: w.webhookHost, path: "/webhook" }, { ...child, dependsOn: [mainServices.headless] });
        networkPolicies(cfg, args, child);
        this.backup = backupCronJob(BACKUP_NAME, cfg, backupArgs(cfg, args, encryption), child);

        this.editorUrl = `https://${hostOf(cfg, w.editorHost)}`;
        this.webhookUrl = `https://${hostOf(cfg, w.webhookHost)}/webhook`;
        this.namespace = ns;
        this.serviceAccountName = APP;
        this.mainSelector = main.selector;
        this.workerSelector = worker.selector;
        this.registerOutputs({ editorUrl: this.editorUrl, webhookUrl: this.webhookUrl });
    }
}

/** The tool's Secrets: its generated encryption key, and the gateway token and model API key of the stack. */
function toolSecrets(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const w = cfg.workflow;
    const encryptionKey = new random.RandomPassword(`${name}-encryption-key`, { length: w.encryptionKeyLength, special: false }, opts);
    const encryption = new k8s.core.v1.Secret(`${name}-encryption`, {
        metadata: { name: `${APP}-encryption`, namespace: w.namespace, labels },
        type: "Opaque",
        stringData: { "encryption-key": encryptionKey.result },
    }, opts);
    const external = new k8s.core.v1.Secret(`${name}-external`, {
        metadata: { name: `${APP}-external`, namespace: w.namespace, labels },
        type: "Opaque",
        stringData: { "gateway-token": w.gatewayToken, "model-api-key": w.modelApiKey },
    }, opts);
    return { encryption, external };
}

/** Service accounts: `workflow` (workers; bound in the rbacNamespaces) and `workflow-main` (no rights). */
function serviceAccounts(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const ns = cfg.workflow.namespace;
    const worker = new k8s.core.v1.ServiceAccount(`${name}-sa`, { metadata: { name: APP, namespace: ns, labels }, automountServiceAccountToken: false }, opts);
    const main = new k8s.core.v1.ServiceAccount(`${name}-main-sa`, { metadata: { name: `${APP}-main`, namespace: ns, labels }, automountServiceAccountToken: false }, opts);
    for (const target of cfg.workflow.rbacNamespaces) {
        const role = new k8s.rbac.v1.Role(`${name}-gitops-${target}`, {
            metadata: { name: `${APP}-gitops`, namespace: target, labels },
            rules: RBAC_RULES,
        }, opts);
        new k8s.rbac.v1.RoleBinding(`${name}-gitops-${target}`, {
            metadata: { name: `${APP}-gitops`, namespace: target, labels },
            roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: `${APP}-gitops` },
            subjects: [{ kind: "ServiceAccount", name: APP, namespace: ns }],
        }, { ...opts, dependsOn: [role, worker] });
    }
    return { main, worker };
}

const secretRef = (secretName: pulumi.Input<string>, key: string) => ({ valueFrom: { secretKeyRef: { name: secretName, key } } });

/** The environment of the main process and the workers (n8n 1.68.0's names). */
function toolEnv(cfg: StackConfig, args: WorkflowArgs, secrets: { encryption: k8s.core.v1.Secret; external: k8s.core.v1.Secret }, poolSize: number): EnvVar[] {
    const w = cfg.workflow;
    const editorHost = hostOf(cfg, w.editorHost);
    return [
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
        { name: "N8N_ENCRYPTION_KEY", ...secretRef(secrets.encryption.metadata.name, "encryption-key") },
        { name: "N8N_PORT", value: String(w.port) },
        { name: "N8N_HOST", value: editorHost },
        { name: "N8N_PROTOCOL", value: "https" },
        // Invite links and OAuth callback URLs are built from this (UrlService.getInstanceBaseUrl).
        { name: "N8N_EDITOR_BASE_URL", value: `https://${editorHost}/` },
        { name: "WEBHOOK_URL", value: `https://${hostOf(cfg, w.webhookHost)}/` },
        // One reverse proxy (the ingress controller) in front: trust its X-Forwarded-For.
        { name: "N8N_PROXY_HOPS", value: "1" },
        { name: "N8N_USER_FOLDER", value: DATA_DIR },
        { name: "N8N_DIAGNOSTICS_ENABLED", value: "false" },
        { name: "HOME", value: DATA_DIR },
        { name: "GATEWAY_TOKEN", ...secretRef(secrets.external.metadata.name, "gateway-token") },
        { name: "MODEL_API_KEY", ...secretRef(secrets.external.metadata.name, "model-api-key") },
    ];
}

/**
 * A pod of the tool as the image's node user, its data at DATA_DIR: the main process (`start`), or a
 * worker (`worker`), the only one that calls the Kubernetes API with its service account's token.
 */
function processPod(cfg: StackConfig, role: "main" | "worker", env: EnvVar[], account: k8s.core.v1.ServiceAccount): Omit<PodArgs, "spreadSelector"> {
    const w = cfg.workflow;
    const tmp = scratch("tmp", "/tmp", "1Gi");
    return {
        serviceAccountName: account.metadata.name,
        callsKubernetesApi: role === "worker",
        fsGroup: WORKFLOW_UID,
        terminationGracePeriodSeconds: w.terminationGracePeriod,
        containers: [hardenedContainer({
            name: role,
            image: w.image,
            args: role === "main" ? ["start"] : ["worker", `--concurrency=${w.workerConcurrency}`],
            runAsUser: WORKFLOW_UID,
            runAsGroup: WORKFLOW_UID,
            ports: [{ name: "http", containerPort: w.port }],
            env,
            resources: role === "main" ? w.main : w.worker,
            livenessProbe: httpProbe("/healthz", "http", w.liveness),
            readinessProbe: httpProbe("/healthz/readiness", "http", w.readiness),
            preStopDelay: w.preStopDelay,
            volumeMounts: [{ name: "data", mountPath: DATA_DIR }, tmp.mount],
        })],
        volumes: [tmp.volume],
    };
}

/** Ingress controller -> main; main and workers -> PostgreSQL, Redis, the model API; workers -> the API server. */
function networkPolicies(cfg: StackConfig, args: WorkflowArgs, opts: pulumi.CustomResourceOptions) {
    const w = cfg.workflow;
    const main = mainLabels(cfg);
    const worker = workerLabels(cfg);
    const toModelApi: Flow = { peer: internet(), ports: [{ port: w.modelApiPort }] };
    allowOnly(`${APP}-main`, {
        namespace: w.namespace, podSelector: main.selector, labels: main.labels,
        ingress: [{ peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: w.port }] }],
        egress: [...toStores(args), toModelApi],
    }, opts);
    allowOnly(`${APP}-worker`, {
        namespace: w.namespace, podSelector: worker.selector, labels: worker.labels,
        ingress: [],
        egress: [...toStores(args), toModelApi, { peer: apiServer(cfg.guardrails.apiServerCidr), ports: cfg.guardrails.apiServerPorts.map((port) => ({ port })) }],
    }, opts);
}

const toDatabase = (args: WorkflowArgs): Flow => ({ peer: podsIn(args.postgres.namespace, args.postgres.selector, "PostgreSQL"), ports: [{ port: args.postgres.port }] });
const toStores = (args: WorkflowArgs): Flow[] => [toDatabase(args), { peer: podsIn(args.redis.namespace, args.redis.selector, "Redis"), ports: [{ port: args.redis.port }] }];

/**
 * Backup: CLI export of workflows and (encrypted) credentials, in the tool's image; restore imports
 * them. WF_BACKUP_MODE, WF_CLI and WF_EXPORT_CREDENTIALS are the backup script's own settings, not n8n's.
 */
function backupArgs(cfg: StackConfig, args: WorkflowArgs, encryption: k8s.core.v1.Secret): BackupCronJobArgs {
    const w = cfg.workflow;
    const env = {
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
    const secretEnv = {
        DB_POSTGRESDB_USER: { secretName: args.postgres.secretName, key: "username" },
        DB_POSTGRESDB_PASSWORD: { secretName: args.postgres.secretName, key: "password" },
        N8N_ENCRYPTION_KEY: { secretName: encryption.metadata.name, key: "encryption-key" },
    };
    const side = { env, secretEnv, egress: [toDatabase(args)], runAsUser: WORKFLOW_UID };
    return {
        namespace: w.namespace,
        app: APP,
        schedule: cfg.backups.workflow.schedule,
        image: w.image,
        volumeSize: cfg.backups.workflow.volumeSize,
        fsGroup: WORKFLOW_UID,
        // The tool's CLI boots the whole application: it needs a worker's memory, not a client tool's.
        resources: w.worker,
        backup: { script: scriptFile("workflow-backup.sh"), ...side },
        restore: { script: scriptFile("workflow-restore.sh"), ...side },
    };
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

function dataVolume(cfg: StackConfig) {
    return { size: cfg.workflow.volumeSize, sizeKey: keyOf(["workflow", "volumeSize"]), storageClass: cfg.dataStores.storageClass, retain: true };
}
