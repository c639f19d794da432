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

/** Paths inside the agent server container. */
export const AGENT_PATHS = {
    configDir: "/etc/agent-server",
    configFile: "/etc/agent-server/config.json",
    home: "/home/agent",
    cache: "/home/agent/.cache",
    data: "/var/lib/agent-server",
    workspace: "/workspace",
} as const;

export const GATEWAY_TOOLS = [
    "describe", "health", "read", "find_user", "preview_recharge", "recharge", "update_user_limits", "set_account_schedulable", "model_control_options",
] as const;
export const GATEWAY_MCP = "gateway-admin";

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
