/**
 * The bridge's settings, all from its environment. The first six are the names the specification
 * and opencode-bridge use (so the program's configuration and docs keep them); the others are this
 * bridge's own. A setting that is present but malformed stops the start with its name and the
 * expected form; a value that can hold a secret (the agent server's URL and password) is never
 * repeated in a message.
 */
export interface Settings {
    port: number;
    /** The agent server instance, http://host:port (no trailing slash, no credentials). */
    agentBase: string;
    /** <provider>/<model>: the provider is what comes before the first slash (as opencode splits it). */
    defaultModel: string;
    chunkSize: number;
    chunkDelayMs: number;
    leadingEchoFilter: boolean;
    /** Basic-authentication credentials of the agent server (its Secret's username and password). */
    agentUsername: string;
    agentPassword: string;
    /** A file with the client API keys, one a line (a mounted Secret key; read again when it changes). */
    apiKeysFile: string;
    /** How long one chat may take at the agent server before it is aborted (504); also how long a shutdown lets running chats finish. */
    upstreamTimeoutMs: number;
    /** Milliseconds between SSE comment lines while a streamed answer is awaited (keeps proxies from closing the stream). */
    keepAliveMs: number;
    /** The opencode agent chats run as (its permissions are the configuration's: agentServerConfig.ts). */
    agent: string;
    /** Reject at once every permission or question opencode asks in a chat's session (nobody behind the OpenAI API can answer). */
    rejectAsks: boolean;
    /** A conversation's sessions are deleted this long after their last turn (0: never). */
    sessionIdleMs: number;
    /** The request bodies the bridge holds at once, in bytes: one body may be this large; more at once wait their turn with 503. */
    requestMemoryBytes: number;
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
    agent: "BRIDGE_AGENT",
    rejectAsks: "BRIDGE_REJECT_ASKS",
    sessionIdleMs: "BRIDGE_SESSION_IDLE_MS",
    requestMemoryBytes: "BRIDGE_REQUEST_MEMORY_BYTES",
} as const;

/** <provider>/<model>: opencode splits a model id at its first slash, so the model part may hold more (openrouter/anthropic/claude-sonnet-4). */
export const MODEL_ID = /^[\w.-]+\/[\w.:@-]+(\/[\w.:@-]+)*$/;

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
    const bool = (k: keyof typeof ENV_NAMES, dflt: boolean) => {
        const v = raw(k) ?? String(dflt);
        if (v !== "true" && v !== "false") errors.push(`${ENV_NAMES[k]}: "${v}"; expected true or false`);
        return v === "true";
    };
    const agentBase = agentUrl(required("agentBase", "the agent server's URL, http://<host>:<port>"), errors);
    const defaultModel = required("defaultModel", "<provider>/<model>");
    if (defaultModel && !MODEL_ID.test(defaultModel)) errors.push(`${ENV_NAMES.defaultModel}: "${defaultModel}"; expected <provider>/<model> (letters, digits and . _ - : @; the model part may hold more slashes)`);
    const agentUsername = required("agentUsername", "the agent server's basic-authentication user");
    if (agentUsername && /[:\s\x00-\x1f\x7f]/.test(agentUsername)) errors.push(`${ENV_NAMES.agentUsername}: expected a user name without ':', spaces or control characters (RFC 7617)`);
    const agentPassword = required("agentPassword", "the agent server's basic-authentication password");
    if (agentPassword && /[\x00-\x1f\x7f]/.test(agentPassword)) errors.push(`${ENV_NAMES.agentPassword}: holds a control character (a line break from the Secret?); expected the password alone`);
    const agent = raw("agent") || "bridge";
    if (!/^[\w.-]+$/.test(agent)) errors.push(`${ENV_NAMES.agent}: "${agent}"; expected an agent name of the agent server's configuration (letters, digits, . _ -)`);
    const s: Settings = {
        port: int("port", 3100, 1, 65535),
        agentBase,
        defaultModel,
        chunkSize: int("chunkSize", 4, 1, 1_000_000),
        chunkDelayMs: int("chunkDelayMs", 10, 0, 60_000),
        leadingEchoFilter: bool("leadingEchoFilter", false),
        agentUsername,
        agentPassword,
        apiKeysFile: required("apiKeysFile", "the path of the file with the client API keys"),
        upstreamTimeoutMs: int("upstreamTimeoutMs", 300_000, 1000, 3_600_000),
        keepAliveMs: int("keepAliveMs", 15_000, 100, 600_000),
        agent,
        rejectAsks: bool("rejectAsks", true),
        sessionIdleMs: int("sessionIdleMs", 3_600_000, 0, 365 * 86_400_000),
        requestMemoryBytes: int("requestMemoryBytes", 8 * 1024 * 1024, 64 * 1024, 4 * 1024 * 1024 * 1024),
    };
    if (errors.length > 0) throw new SettingsError(`model bridge: bad environment:\n  ${errors.join("\n  ")}`);
    return s;
}

/** OPENCODE_BASE checked without ever repeating a password or query it may carry. */
function agentUrl(value: string, errors: string[]): string {
    if (!value) return "";
    const name = ENV_NAMES.agentBase;
    let u: URL;
    try {
        u = new URL(value);
    } catch {
        errors.push(`${name}: not a URL; expected http://<host>:<port>`);
        return "";
    }
    const shown = redactUrl(u);
    if (u.username || u.password) errors.push(`${name}: ${shown} carries credentials; expected http://<host>:<port> (the credentials come from ${ENV_NAMES.agentUsername} and ${ENV_NAMES.agentPassword})`);
    else if (u.protocol !== "http:" && u.protocol !== "https:") errors.push(`${name}: ${shown}; expected an http or https URL`);
    else if ((u.pathname !== "/" && u.pathname !== "") || u.search || u.hash) errors.push(`${name}: ${shown}; expected http://<host>:<port> without a path, query or fragment`);
    else return `${u.protocol}//${u.host}`;
    return "";
}

/** A URL for messages: user, password, path, query and fragment (any may carry a token) replaced by ***. */
export function redactUrl(u: URL): string {
    const auth = u.username || u.password ? "***@" : "";
    return `${u.protocol}//${auth}${u.host}${u.pathname === "/" || u.pathname === "" ? "" : "/***"}${u.search ? "?***" : ""}${u.hash ? "#***" : ""}`;
}
