/**
 * What a failure is for the client: its HTTP status, OpenAI error body and headers. A model
 * failure (turn.ts) is 429 (Retry-After when the model API gave one), 400 or 502 with the model
 * API's own message; the agent server unreachable or refusing the bridge is 502; a turn longer than
 * BRIDGE_UPSTREAM_TIMEOUT_MS 504; a chat refused or cut short by a shutdown 503; a RequestError
 * (openai.ts) its own status; anything else 500.
 */
import { AgentError } from "./agentServer";
import { errorBody, RequestError } from "./openai";
import { UpstreamFailure } from "./turn";

/** A chat refused, or aborted, because the bridge is shutting down. */
export class ShuttingDown extends AgentError {
    constructor() {
        super("the model bridge is shutting down; send the request again", "aborted");
    }
}

export interface HttpFailure {
    status: number;
    body: ReturnType<typeof errorBody>;
    headers: Record<string, string>;
}

export function httpFailure(e: unknown, upstreamTimeoutMs: number): HttpFailure {
    if (e instanceof UpstreamFailure) {
        const type = e.httpStatus === 429 ? "rate_limit_error" : e.httpStatus === 400 ? "invalid_request_error" : "upstream_error";
        // The OpenAI SDKs retry 408, 409, 429 and 5xx unless told not to: a refused model key or request stays refused.
        const headers: Record<string, string> = {};
        if (e.code === "upstream_auth" || e.httpStatus === 400) headers["x-should-retry"] = "false";
        if (e.retryAfterSeconds !== undefined) headers["Retry-After"] = String(e.retryAfterSeconds);
        return { status: e.httpStatus, body: errorBody(e.message, type, e.code), headers };
    }
    if (e instanceof ShuttingDown) return { status: 503, body: errorBody(e.message, "server_error", "bridge_shutting_down"), headers: { "Retry-After": "1" } };
    if (e instanceof AgentError) {
        if (e.kind === "timeout") return { status: 504, body: errorBody(`the agent server did not finish within ${upstreamTimeoutMs} ms (BRIDGE_UPSTREAM_TIMEOUT_MS); the turn was aborted and taken out of the session`, "upstream_error", "agent_server_timeout"), headers: {} };
        if (e.status === 401) return { status: 502, body: errorBody("the agent server refused the bridge's credentials", "upstream_error", "agent_server_auth"), headers: {} };
        if (e.kind === "unreachable") return { status: 502, body: errorBody("the agent server is unreachable", "upstream_error", "agent_server_unreachable"), headers: {} };
        return { status: 502, body: errorBody(e.message, "upstream_error", "agent_server_error"), headers: {} };
    }
    if (e instanceof RequestError) return { status: e.status, body: errorBody(e.message, e.type, e.code, e.param), headers: e.headers };
    return { status: 500, body: errorBody("internal error of the model bridge", "server_error", "internal_error"), headers: {} };
}
