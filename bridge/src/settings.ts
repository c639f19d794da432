/**
 * The bridge's settings, all from its environment. The first six are the names the specification
 * and opencode-bridge use (so the program's configuration and docs keep them); the others are this
 * bridge's own. A setting that is present but malformed stops the start with its name and the
 * expected form.
 */
export interface Settings {
    port: number;
    /** The agent server instance, http://host:port (no trailing slash). */
    agentBase: string;
    /** <provider>/<model> */
    defaultModel: string;
    chunkSize: number;
    chunkDelayMs: number;
    leadingEchoFilter: boolean;
    /** Basic-authentication credentials of the agent server (its Secret's username and password). */
    agentUsername: string;
    agentPassword: string;
    /** A file with the client API keys, one a line (a mounted Secret key; read again when it changes). */
    apiKeysFile: string;
    /** How long one chat may take at the agent server before it is aborted (504). */
    upstreamTimeoutMs: number;
    /** Milliseconds between SSE comment lines while a streamed answer is awaited (keeps proxies from closing the stream). */
    keepAliveMs: number;
}

/** The environment names (the Deployment's env and docs/product-settings.md use these). */
export const ENV_NAMES = {
    port: "BRIDGE_PORT",
    agentBase: "OPENCODE_BASE",
    defaultModel: "DEFAULT_MODEL",
    chunkSize: "OPENAI_STREAM_CHUNK_SIZE",
    chunkDelayMs: "OPENAI_STREAM_CHUNK_DELAY_MS",
    leadingEchoFilter: "ENABLE_LEADING_ECHO_FILTER",
    agentUsername: "OPENCODE_SERVER_USERNAME",
    agentPassword: "OPENCODE_SERVER_PASSWORD",
    apiKeysFile: "BRIDGE_CLIENT_KEYS_FILE",
    upstreamTimeoutMs: "BRIDGE_UPSTREAM_TIMEOUT_MS",
    keepAliveMs: "BRIDGE_KEEPALIVE_MS",
} as const;

export class SettingsError extends Error {}

export function readSettings(env: NodeJS.ProcessEnv): Settings {
    const errors: string[] = [];
    const raw = (k: keyof typeof ENV_NAMES) => env[ENV_NAMES[k]];
    const required = (k: keyof typeof ENV_NAMES, expected: string) => {
        const v = raw(k);
        if (v === undefined || v === "") errors.push(`${ENV_NAMES[k]}: not set; expected ${expected}`);
        return v ?? "";
    };
    const int = (k: keyof typeof ENV_NAMES, dflt: number, min: number, max: number) => {
        const v = raw(k);
        if (v === undefined || v === "") return dflt;
        if (!/^\d+$/.test(v) || Number(v) < min || Number(v) > max) {
            errors.push(`${ENV_NAMES[k]}: "${v}"; expected an integer from ${min} to ${max}`);
            return dflt;
        }
        return Number(v);
    };
    const agentBase = required("agentBase", "the agent server's URL, http://<host>:<port>").replace(/\/+$/, "");
    if (agentBase && !/^https?:\/\/[^/]+$/.test(agentBase)) errors.push(`${ENV_NAMES.agentBase}: "${agentBase}"; expected http://<host>:<port> without a path`);
    const defaultModel = required("defaultModel", "<provider>/<model>");
    if (defaultModel && !/^[\w.-]+\/[\w.:-]+$/.test(defaultModel)) errors.push(`${ENV_NAMES.defaultModel}: "${defaultModel}"; expected <provider>/<model>`);
    const echo = raw("leadingEchoFilter") ?? "false";
    if (echo !== "true" && echo !== "false") errors.push(`${ENV_NAMES.leadingEchoFilter}: "${echo}"; expected true or false`);
    const s: Settings = {
        port: int("port", 3100, 1, 65535),
        agentBase,
        defaultModel,
        chunkSize: int("chunkSize", 4, 1, 1_000_000),
        chunkDelayMs: int("chunkDelayMs", 10, 0, 60_000),
        leadingEchoFilter: echo === "true",
        agentUsername: required("agentUsername", "the agent server's basic-authentication user"),
        agentPassword: required("agentPassword", "the agent server's basic-authentication password"),
        apiKeysFile: required("apiKeysFile", "the path of the file with the client API keys"),
        upstreamTimeoutMs: int("upstreamTimeoutMs", 300_000, 1000, 3_600_000),
        keepAliveMs: int("keepAliveMs", 15_000, 100, 600_000),
    };
    if (errors.length > 0) throw new SettingsError(`model bridge: bad environment:\n  ${errors.join("\n  ")}`);
    return s;
}
