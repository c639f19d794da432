/**
 * The agent server's configuration file (section 2.8), generated from typed config. It never
 * holds a secret: the provider apiKey and the gateway admin key are `{env:NAME}` references that
 * the agent server substitutes from environment variables fed by Secrets.
 */
import type { StackConfig } from "../config";

/**
 * Environment names: opencode's own (read in its src/flag/flag.ts), MODEL_API_KEY (ours, referenced
 * by the file) and the tool server's admin key, which the file passes on under the tool server's
 * own name (SUB2API_ADMIN_API_KEY, read by sub2api-admin's server.mjs).
 */
export const ENV = {
    serverUsername: "OPENCODE_SERVER_USERNAME",
    disableModelsFetch: "OPENCODE_DISABLE_MODELS_FETCH",
    disableDefaultPlugins: "OPENCODE_DISABLE_DEFAULT_PLUGINS",
    disableProjectConfig: "OPENCODE_DISABLE_PROJECT_CONFIG",
    serverPassword: "OPENCODE_SERVER_PASSWORD",
    configFile: "OPENCODE_CONFIG",
    modelApiKey: "MODEL_API_KEY",
    gatewayAdminKey: "SUB2API_ADMIN_API_KEY",
} as const;

const envRef = (name: string) => `{env:${name}}`;

/**
 * The environment the gateway admin tool server (sub2api-admin server.mjs) reads: SUB2API_BASE_URL
 * (required), SUB2API_ALLOWED_HOST, SUB2API_TIMEOUT_MS, SUB2API_MAX_RECHARGE, SUB2API_ADMIN_API_KEY.
 */
export function gatewayToolEnvironment(cfg: StackConfig): Record<string, string> {
    const g = cfg.gatewayTool;
    return {
        SUB2API_BASE_URL: g.baseUrl,
        SUB2API_ALLOWED_HOST: g.allowedHost,
        SUB2API_TIMEOUT_MS: String(g.timeoutMs),
        SUB2API_MAX_RECHARGE: String(g.maxRecharge),
        SUB2API_ADMIN_API_KEY: envRef(ENV.gatewayAdminKey),
    };
}

/**
 * opencode's switches, each read in its src/flag/flag.ts (1.2.27) as "true" or "1":
 * - no fetch of the models.dev catalogue at start and every hour (src/provider/models.ts; the
 *   catalogue opencode ships is used, and the provider's models are the configuration's own);
 * - no install of its default plugins from npm at start (src/plugin/index.ts: opencode-anthropic-auth);
 * - no project configuration from the workspace (opencode.json or .opencode/ there, which a chat
 *   could write, would otherwise override this file's permissions at the next start).
 * opencode's other install at start, `bun install` of @opencode-ai/plugin in its global config
 * folder, has no switch: it is skipped when that folder is not writable (src/config/config.ts
 * needsInstall), so XDG_CONFIG_HOME is the read-only configuration mount (agentPathEnv).
 */
export const agentServerFlags = (): { name: string; value: string }[] => [
    { name: ENV.disableModelsFetch, value: "true" },
    { name: ENV.disableDefaultPlugins, value: "true" },
    { name: ENV.disableProjectConfig, value: "true" },
];

/** Paths inside the agent server container. */
export const AGENT_PATHS = {
    configDir: "/etc/agent-server",
    configFile: "/etc/agent-server/config.json",
    /** opencode's global config folder (XDG_CONFIG_HOME/opencode): a read-only folder of the configuration mount. */
    globalConfigDir: "/etc/agent-server/opencode",
    home: "/home/agent",
    cache: "/home/agent/.cache",
    data: "/var/lib/agent-server",
    workspace: "/workspace",
} as const;

export const GATEWAY_TOOLS = [
    "describe", "health", "read", "find_user", "preview_recharge", "recharge", "update_user_limits", "set_account_schedulable", "model_control_options",
] as const;
export const GATEWAY_MCP = "gateway-admin";

/** The agent the model bridge's chats run as (BRIDGE_AGENT): its permissions are bridgeAgentPermission's. */
export const BRIDGE_AGENT = "bridge";

/**
 * What a chat through the bridge may do, on top of opencode's defaults and the global rules (the
 * gateway admin tools stay denied, section 5.3): no shell unless bridgeChatShell; no subagents
 * (the task tool: opencode's explore subagent may run the shell, and a task can resume any session
 * by its ID); no question tool and none of opencode's ask rules (a doom loop, a folder outside the
 * workspace, .env files) unless bridgeChatAsk, since nobody answers through the OpenAI API.
 */
export function bridgeAgentPermission(cfg: StackConfig): Record<string, unknown> {
    const b = cfg.bridge;
    const ask = b.chatAsk ? "ask" : "deny";
    return {
        bash: b.chatShell ? "allow" : "deny",
        task: "deny",
        question: b.chatAsk ? "allow" : "deny",
        doom_loop: ask,
        external_directory: ask,
        read: { "*": "allow", "*.env": ask, "*.env.*": ask, "*.env.example": "allow" },
    };
}

export function agentConfig(cfg: StackConfig): Record<string, unknown> {
    const a = cfg.agentServer;
    const g = cfg.gatewayTool;
    const p = a.provider;
    const models = Object.fromEntries(
        p.models.map((key) => [key, { name: key, id: key, limit: { context: p.contextLimit, output: p.outputLimit }, options: { store: a.storeResponses } }]),
    );
    const tool = (t: string) => `${GATEWAY_MCP}_${t}`;
    const maintainer = {
        [`${GATEWAY_MCP}_*`]: g.defaultPermission,
        ...Object.fromEntries(g.maintainerAllow.map((t) => [tool(t), "allow"])),
        ...Object.fromEntries(g.maintainerAsk.map((t) => [tool(t), "ask"])),
    };
    const config: Record<string, unknown> = {
        $schema: a.configSchemaUrl,
        model: a.model,
        small_model: a.smallModel,
        provider: {
            [p.name]: {
                npm: p.npm,
                name: p.displayName,
                options: { baseURL: p.baseUrl, apiKey: envRef(ENV.modelApiKey) },
                models,
            },
        },
        // Every gateway admin tool is denied unless an agent says otherwise (section 5.3).
        permission: { [`${GATEWAY_MCP}_*`]: g.defaultPermission },
        agent: {
            build: { options: { store: a.storeResponses } },
            plan: { options: { store: a.storeResponses } },
            [g.maintainerAgent]: { description: "Operates the gateway through its admin tools", options: { store: a.storeResponses }, permission: maintainer },
            [BRIDGE_AGENT]: { description: "Chats through the model bridge (OpenAI-compatible API)", mode: "primary", options: { store: a.storeResponses }, permission: bridgeAgentPermission(cfg) },
        },
        mcp: {},
    };
    if (g.enabled) {
        config.mcp = {
            [GATEWAY_MCP]: {
                type: "local",
                command: [...g.command],
                enabled: true,
                timeout: g.toolTimeoutMs,
                environment: gatewayToolEnvironment(cfg),
            },
        };
    }
    return config;
}

export const agentConfigFile = (cfg: StackConfig) => JSON.stringify(agentConfig(cfg), null, 2) + "\n";

/** The file in opencode's read-only global config folder (a ConfigMap item: the folder must exist for opencode to start). */
export const GLOBAL_CONFIG_README = "opencode's global configuration folder, read-only on purpose: opencode installs nothing into it at start. The configuration is OPENCODE_CONFIG.\n";
