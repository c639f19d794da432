import {
    cpu, cron, image, int, list, memory, mountPath, optional, port, relativePath, secret, seconds, storage, str, namespaceName, hostLabel, storageClassName,
} from "../schema";

const HTTPS_URL = /^https:\/\/[^\s/]+\/\S*$/;

/**
 * The booking application (sections 2.11, 4.4, 5.10, 5.11, 8.3): one replica on a persistent
 * SQLite volume, a chat-notification robot secret created on the cluster only, and a nightly
 * consistent copy of the SQLite file.
 */
export const booking = {
    namespace: namespaceName("the namespace of the booking application", "booking"),
    image: image("the booking application image", "registry.example.com/ops/booking:1.4.0"),
    args: optional(list("container arguments replacing the image's command (unset: the image's own; the ci stack runs a stand-in with them)", undefined)),
    port: port("the booking application's HTTP port", 8080),
    host: hostLabel("first label of the booking application's public host (<label>.<domain>)", "booking"),
    livenessPath: str("liveness probe path (section 4.4)", "/health", { pattern: /^\/\S*$/, expected: "an absolute URL path" }),
    readinessPath: str("readiness probe path (section 4.4)", "/readyz", { pattern: /^\/\S*$/, expected: "an absolute URL path" }),
    liveness: {
        initialDelay: seconds("booking liveness probe initial delay", 10),
        period: seconds("booking liveness probe period", 30),
    },
    readiness: {
        initialDelay: seconds("booking readiness probe initial delay", 5),
        period: seconds("booking readiness probe period", 10),
    },
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the booking pod", 30),
    preStopDelay: seconds("seconds the booking preStop hook waits so the address leaves the endpoints first", 5, 60),
    requests: { cpu: cpu("booking cpu request", "100m"), memory: memory("booking memory request", "128Mi") },
    limits: { cpu: cpu("booking cpu limit", "500m"), memory: memory("booking memory limit", "512Mi") },
    runAsUser: int("the uid the booking image runs as", 10001, { min: 1, max: 2147483647 }),
    dataMountPath: mountPath("where the SQLite volume is mounted", "/data"),
    databaseFile: relativePath("file name")("the SQLite database file name inside the data volume (DATABASE_PATH = <dataMountPath>/<file>)", "booking.db"),
    dataVolumeSize: storage("size of the persistent SQLite volume", "1Gi"),
    storageClass: optional(storageClassName("storage class of the SQLite volume (the cluster default when unset)")),
    chat: {
        webhookUrl: secret("chat-notification robot webhook URL (secret key webhook_url)", {
            pattern: HTTPS_URL,
            expected: "an https:// webhook URL",
            placeholder: "https://chat.example.com/robot/send?access_token=render-placeholder-0000000000",
        }),
        secSecret: secret("chat-notification robot signing secret (secret key sec_secret)", { expected: "a non-empty signing secret", placeholder: "SECrender-placeholder-000000000000000000" }),
        revokeSecret: secret("chat-notification robot revoke secret (secret key revoke_secret)", { expected: "a non-empty revoke secret", placeholder: "render-placeholder-revoke-000000000000" }),
        webhookPort: port("the port of the chat-notification webhook (egress to the internet is opened on it)", 443),
    },
    backup: {
        schedule: cron("consistent online copy of the SQLite file (section 8.3 has no booking row; daily here, like the chat UI's SQLite copy)", "15 3 * * *"),
        volumeSize: storage("size of the booking backup volume", "2Gi"),
    },
};
