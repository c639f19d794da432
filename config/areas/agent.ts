import {
    bool, cpu, image, int, intList, list, memory, millis, oneOf, optional, port, replicas, secret, seconds, storage, str, url, namespaceName, ipAddress, hostLabel, storageClassName, hostname,
} from "../schema";
import { MODEL_ID } from "../../bridge/src/settings";

const ADMIN_KEY = /^admin-[0-9a-f]{64}$/;
/** <provider>/<model_key>: opencode splits a model id at its first slash (its provider parseModel), so a model key may hold more slashes (openrouter/anthropic/claude-sonnet-4); the bridge reads DEFAULT_MODEL the same way. */
const MODEL_ID_FORM = { pattern: MODEL_ID, expected: "<provider>/<model_key> (the provider before the first slash; letters, digits and . _ - : @)" };

/** The agent server (section 2.8, 4.1, 5.1, 8.2) and the gateway admin tool server it runs (2.9, 5.2, 5.3). */
export const agentServer = {
    namespace: namespaceName("the namespace of the agent server, its bridge and its tool server", "agent"),
    image: image("the agent server image, built from images/agent-server/Containerfile: opencode (`opencode serve`) plus node and the sub2api-admin tool server (gatewayToolCommand); registry.example.com is a placeholder for the registry you push it to", "registry.example.com/ops/agent-server:1.2.27"),
    ports: intList("the agent server instances, one per port (section 8.2: 4000 and 4001)", [4000, 4001], port("a TCP port")),
    bindAddress: ipAddress("the address the agent server binds (an IP address: `opencode serve --hostname`)", "0.0.0.0"),
    hostLabel: hostLabel("first label of the public host of the first instance (<label>.<domain>); the others get <label>-<port>", "agent"),
    username: str("the basic-authentication user (OPENCODE_SERVER_USERNAME; the specification's AGENT_SERVER_USERNAME)", "agent", { pattern: /^[^:\s\x00-\x1f\x7f]+$/, expected: "a basic-authentication user name without ':', spaces or control characters (RFC 7617: the user-id ends at the first ':')" }),
    passwordLength: int("length of the generated OPENCODE_SERVER_PASSWORD (the specification's AGENT_SERVER_PASSWORD; alphanumeric)", 16, { min: 16, max: 128 }),
    healthPath: str("the health path of section 4.1 (behind basic authentication like every route, so the kubelet probes the TCP port; npm run test:products checks 401/200 on it)", "/global/health"),
    liveness: {
        initialDelay: seconds("liveness probe initial delay", 15),
        period: seconds("liveness probe period", 30),
    },
    readiness: {
        initialDelay: seconds("readiness probe initial delay", 10),
        period: seconds("readiness probe period", 10),
    },
    startup: {
        period: seconds("startup probe period", 5),
        failureThreshold: int("startup probe failure threshold", 30, { min: 1, max: 1000 }),
    },
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the agent server pods", 30),
    preStopDelay: seconds("seconds the preStop hook waits so the address leaves the endpoints first", 5, 60),
    requests: { cpu: cpu("agent server cpu request", "500m"), memory: memory("agent server memory request", "1Gi") },
    limits: { cpu: cpu("agent server cpu limit", "2"), memory: memory("agent server memory limit", "4Gi") },
    dataVolumeSize: storage("agent server data volume", "1Gi"),
    workspaceVolumeSize: storage("agent server workspace volume", "5Gi"),
    storageClass: optional(storageClassName("storage class of the agent server volumes (the cluster default when unset)")),
    configSchemaUrl: url("$schema of the agent configuration file", "https://opencode.ai/config.json"),
    model: str("the default model, <provider>/<model_key> (one of the provider's models)", "upstream/gpt-5", MODEL_ID_FORM),
    smallModel: str("the small model, <provider>/<model_key> (one of the provider's models)", "upstream/gpt-5-mini", MODEL_ID_FORM),
    provider: {
        name: str("the provider key in the agent configuration", "upstream"),
        displayName: str("the provider's display name", "Upstream model API"),
        npm: str("the provider's npm package", "@ai-sdk/openai-compatible"),
        // The model bridge sits in front of the agent server (it forwards to it), so the agent
        // server's own provider is the upstream model API, never the bridge.
        baseUrl: url("the provider baseURL: the OpenAI-compatible model API the agent server calls", "https://api.openai.com/v1"),
        apiKey: secret("the model API key, substituted into the configuration from an environment variable", { expected: "a non-empty API key", placeholder: "sk-render-placeholder-0000000000000000" }),
        models: list("model keys offered by the provider", ["gpt-5", "gpt-5-mini"]),
        contextLimit: int("model context limit in tokens", 128000, { min: 1024, max: 10_000_000 }),
        outputLimit: int("model output limit in tokens", 32000, { min: 256, max: 1_000_000 }),
    },
    storeResponses: bool("agent.build/agent.plan options.store (false avoids HTTP 502 on item_reference, section 7)", false),
    httpProxy: optional(url("an outbound HTTP proxy, without user or password (those go in agentServerHttpProxyCredentials); NO_PROXY then covers every in-cluster host", undefined, ["http", "https"], "a proxy URL without user or password: set them with `pulumi config set --secret agentServerHttpProxyCredentials <user>:<password>`")),
    httpProxyCredentials: optional(secret("the outbound proxy's <user>:<password>, put into the proxy URL inside a Secret (HTTP_PROXY and HTTPS_PROXY come from it)", {
        pattern: /^[^:\s@/]+:[^\s@/]+$/,
        expected: "<user>:<password> (no spaces, '@' or '/'; percent-encode them)",
        placeholder: "render-proxy-user:render-placeholder-proxy-password",
    })),
    noProxyExtra: list("hosts added to NO_PROXY besides the in-cluster ones", []),
    oauthProxy: {
        enabled: bool("put an OAuth 2.0 reverse proxy in front of the agent server", false),
        image: image("the OAuth 2.0 reverse proxy image", "quay.io/oauth2-proxy/oauth2-proxy:v7.6.0"),
        port: port("the OAuth proxy's listening port", 4180),
        provider: str("the identity provider type", "oidc"),
        issuerUrl: url("the identity provider's issuer URL", "https://id.example.com/realms/ops"),
        clientId: optional(secret("the OAuth client id", { expected: "a non-empty client id", placeholder: "render-placeholder-client-id" })),
        clientSecret: optional(secret("the OAuth client secret", { expected: "a non-empty client secret", placeholder: "render-placeholder-client-secret" })),
        cookieSecretLength: int("length of the generated cookie secret (alphanumeric)", 32, { min: 32, max: 32 }),
        requests: { cpu: cpu("OAuth proxy cpu request", "50m"), memory: memory("OAuth proxy memory request", "64Mi") },
        limits: { cpu: cpu("OAuth proxy cpu limit", "200m"), memory: memory("OAuth proxy memory limit", "128Mi") },
    },
};

/**
 * The gateway admin tool server: the sub2api-admin MCP server (.opencode/mcp/sub2api-admin/server.mjs
 * of github.com/AaronYang0628/docs), a stdio JSON-RPC server started by the agent server. The
 * specification's GATEWAY_* names are its SUB2API_* settings (docs/product-settings.md).
 */
export const gatewayTool = {
    enabled: bool("run the gateway admin tool server as a local tool server of the agent server", true),
    command: list("the command that starts the tool server inside the agent server image (node and the sub2api-admin server.mjs)", ["node", "/opt/sub2api-admin/server.mjs"]),
    baseUrl: url("SUB2API_BASE_URL (the specification's GATEWAY_BASE_URL): the gateway's internal URL", "http://gateway.gateway.svc.cluster.local:3000"),
    allowedHost: hostname("SUB2API_ALLOWED_HOST (GATEWAY_ALLOWED_HOST): the only host the tool server may contact; must equal the host of gatewayToolBaseUrl", "gateway.gateway.svc.cluster.local"),
    namespace: namespaceName("the namespace of the gateway the tool server calls (opened in the agent server's egress)", "gateway"),
    timeoutMs: millis("SUB2API_TIMEOUT_MS (GATEWAY_TIMEOUT_MS)", 30000, 600000),
    toolTimeoutMs: millis("the tool timeout in the agent configuration (mcp timeout)", 40000, 600000),
    maxRecharge: int("SUB2API_MAX_RECHARGE (GATEWAY_MAX_RECHARGE)", 10000, { min: 1, max: 10000 }),
    adminApiKey: secret("SUB2API_ADMIN_API_KEY (GATEWAY_ADMIN_API_KEY; secret key admin-api-key)", {
        pattern: ADMIN_KEY,
        expected: "admin- followed by 64 lower-case hexadecimal characters",
        placeholder: `admin-${"0".repeat(64)}`,
    }),
    defaultPermission: oneOf("permission of every gateway-admin_* tool for agents without an explicit rule", ["deny"] as const, "deny"),
    maintainerAgent: str("the agent that may use the gateway admin tools", "maintainer"),
    maintainerAllow: list("tools the maintainer agent may use without asking", ["describe", "health", "read", "find_user", "preview_recharge", "model_control_options"]),
    maintainerAsk: list("tools the maintainer agent must confirm first", ["recharge", "update_user_limits", "set_account_schedulable"]),
};

/**
 * The model bridge: this repository's bridge/ (its image built from bridge/Containerfile), an
 * OpenAI-compatible API under /v1 in front of the agent server: it forwards to OPENCODE_BASE with
 * the agent server's basic authentication and admits clients by the keys of its own Secret.
 */
export const bridge = {
    image: image("the model bridge image, built from bridge/Containerfile (`/usr/local/bin/node /app/main.js`); registry.example.com is a placeholder for the registry you push it to", "registry.example.com/ops/model-bridge:0.6.0"),
    args: optional(list("container arguments that replace the bridge's start command (unset: /usr/local/bin/node /app/main.js; the ci stack runs a stand-in with them)", undefined)),
    port: port("BRIDGE_PORT: the port the bridge listens on", 3100),
    agentServerPort: port("the agent server instance (one of agentServerPorts) the bridge forwards to: OPENCODE_BASE is its Service", 4000),
    host: hostLabel("first label of the bridge's public host (<label>.<domain>)", "bridge"),
    apiKeyLength: int("length of the generated client API key (Secret model-bridge-api-keys, key api-keys; alphanumeric)", 40, { min: 32, max: 128 }),
    upstreamTimeoutMs: int("BRIDGE_UPSTREAM_TIMEOUT_MS: how long one chat may take at the agent server before the bridge aborts its turn and answers 504; also how long a rollout lets running chats finish (the pods' termination grace period is this plus the preStop wait and 15 s)", 300000, { min: 1000, max: 3_600_000, unit: "milliseconds" }),
    sessionIdleSeconds: int("BRIDGE_SESSION_IDLE_MS (in seconds here): a conversation's agent-server sessions are deleted this long after their last turn (0: never)", 3600, { min: 0, max: 365 * 86400, unit: "seconds" }),
    chatShell: bool("chats through the bridge may run opencode's shell tool (bash) on the agent server (the bridge agent's permission; default false: denied)", false),
    chatAsk: bool("chats through the bridge may wait on a human: opencode's question tool and its ask rules (doom loop, other folders, .env files) stay asks that someone answers in the agent server's UI (default false: denied, and the bridge rejects any ask at once)", false),
    minReplicas: replicas("bridge autoscaler minimum", 2),
    maxReplicas: replicas("bridge autoscaler maximum", 6),
    cpuUtilization: int("bridge autoscaler target cpu utilization (percent of request)", 70, { min: 1, max: 100 }),
    scaleDownWindow: seconds("bridge autoscaler scale-down stabilization window", 300, 3600),
    requests: { cpu: cpu("bridge cpu request", "100m"), memory: memory("bridge memory request", "128Mi") },
    limits: { cpu: cpu("bridge cpu limit", "500m"), memory: memory("bridge memory limit", "256Mi") },
    defaultModel: str("DEFAULT_MODEL (defaultModel): the model the bridge lists on /v1/models and asks the agent server for, <provider>/<model_key> (one of the agent server's provider models)", "upstream/gpt-5", MODEL_ID_FORM),
    streamChunkSize: int("OPENAI_STREAM_CHUNK_SIZE (openaiStreamChunkSize): characters per streamed chunk", 4, { min: 1, max: 1024 }),
    streamChunkDelayMs: int("OPENAI_STREAM_CHUNK_DELAY_MS (openaiStreamChunkDelayMs): pause between streamed chunks", 10, { min: 0, max: 10000 }),
    enableLeadingEchoFilter: bool("ENABLE_LEADING_ECHO_FILTER (enableLeadingEchoFilter): strip a leading echo of the prompt from answers (default false)", false),
    replicas: replicas("bridge replicas before the autoscaler takes over", 2),
    preStopDelay: seconds("seconds the bridge's preStop hook waits", 5, 60),
};
