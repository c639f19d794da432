import {
    cpu, image, int, list, memory, millis, port, replicas, secret, seconds, storage, str, namespaceName, hostLabel,
} from "../schema";

const NAMESPACE = { pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, expected: "a namespace name (a DNS label)" };
const probe = (what: string, initialDelay: number, period: number) => ({
    initialDelay: seconds(`${what} probe initial delay`, initialDelay),
    period: seconds(`${what} probe period`, period),
    failureThreshold: int(`${what} probe failure threshold`, 6, { min: 1, max: 100 }),
});

/**
 * The workflow automation tool (sections 4.3, 5.7, 5.9, 8.2) in queue mode: one main process
 * (editor, API, webhooks) and workers that run the executions, on PostgreSQL and Redis.
 * Table 8.2's neutral WF_ names are placeholders: the program emits n8n's own N8N_* names
 * (docs/product-settings.md maps them).
 */
export const workflow = {
    namespace: namespaceName("the namespace of the workflow tool", "workflow"),
    image: image("the workflow tool image", "docker.n8n.io/n8nio/n8n:1.68.0"),
    port: port("the HTTP port of the main process (editor, API, webhooks) and of the workers' health server", 5678),
    editorHost: hostLabel("first label of the editor's public host (<label>.<domain>)", "workflow"),
    webhookHost: hostLabel("first label of the webhook host (<label>.<domain>), separate from the editor", "webhook"),
    mainReplicas: replicas("main process count (section 8.2: 1; the main process holds the schedule triggers, so exactly one)", 1, 1),
    workerReplicas: replicas("worker count (section 8.2: 2), the autoscaler's minimum", 2, 50),
    maxWorkerReplicas: replicas("autoscaler maximum of the workers", 4, 50),
    workerCpuUtilization: int("autoscaler target cpu utilization of the workers (percent of request)", 70, { min: 1, max: 100 }),
    workerScaleDownWindow: seconds("autoscaler scale-down stabilization window of the workers", 300, 3600),
    volumeSize: storage("volume of the main process and of each worker (section 8.2: 50Gi each)", "50Gi"),
    executionsTimeout: seconds("EXECUTIONS_TIMEOUT (section 8.2: 300 s)", 300),
    executionsTimeoutMax: seconds("EXECUTIONS_TIMEOUT_MAX (section 8.2: 600 s)", 600),
    mainPoolSize: int("DB_POSTGRESDB_POOL_SIZE of the main process (section 8.2: 10)", 10, { min: 1, max: 1000 }),
    workerPoolSize: int("DB_POSTGRESDB_POOL_SIZE of each worker (section 8.2: 5)", 5, { min: 1, max: 1000 }),
    concurrencyProductionLimit: int("N8N_CONCURRENCY_PRODUCTION_LIMIT (table 8.2's WF_CONCURRENCY_PRODUCTION_LIMIT: 5)", 5, { min: -1, max: 1000 }),
    workerConcurrency: int("executions one worker runs at a time (worker --concurrency)", 5, { min: 1, max: 1000 }),
    redisTimeoutThreshold: millis("QUEUE_BULL_REDIS_TIMEOUT_THRESHOLD (section 8.2: 60000 ms)", 60000),
    database: str("the workflow tool's database and role in PostgreSQL (created by the provisioning job)", "workflow", { pattern: /^[a-z_][a-z0-9_]{0,62}$/, expected: "a lower-case PostgreSQL identifier" }),
    encryptionKeyLength: int("length of the generated N8N_ENCRYPTION_KEY, shared by main, workers and the export job (alphanumeric)", 48, { min: 32, max: 128 }),
    gatewayToken: secret("the gateway token workflows use (env GATEWAY_TOKEN from a Secret)", { expected: "a non-empty token", placeholder: "render-placeholder-gateway-token-000000" }),
    modelApiKey: secret("the model API key workflows use (env MODEL_API_KEY from a Secret)", { expected: "a non-empty API key", placeholder: "sk-render-placeholder-workflow-0000000" }),
    modelApiPort: port("the port of the model API on the internet (egress of main and workers)", 443),
    rbacNamespaces: list("the two namespaces where the workflow service account may read and patch GitOps applications and deployments (section 5.7)", ["argocd", "booking"], str("a namespace", undefined, NAMESPACE)),
    // StatefulSets run with Guaranteed QoS in prod (requests equal limits).
    main: {
        requests: { cpu: cpu("main process cpu request", "1"), memory: memory("main process memory request", "2Gi") },
        limits: { cpu: cpu("main process cpu limit", "1"), memory: memory("main process memory limit", "2Gi") },
    },
    worker: {
        requests: { cpu: cpu("worker cpu request (the autoscaler's reference)", "1"), memory: memory("worker memory request", "2Gi") },
        limits: { cpu: cpu("worker cpu limit", "1"), memory: memory("worker memory limit", "2Gi") },
    },
    liveness: probe("liveness (/healthz)", 30, 20),
    readiness: probe("readiness (/healthz/readiness)", 10, 10),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds (workers finish running executions; at least EXECUTIONS_TIMEOUT)", 330, 3600),
    preStopDelay: seconds("seconds the preStop hook waits so the address leaves the endpoints first", 5, 60),
};
