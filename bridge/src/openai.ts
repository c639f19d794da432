/**
 * The OpenAI chat-completions shapes the bridge reads and writes. Every field of the request is
 * honoured or refused with 400 naming it (as LiteLLM does without drop_params):
 *
 *   honoured   messages (system/developer/user/assistant, text content), model, stream,
 *              stream_options.include_usage, n (1), response_format (text; json_schema and
 *              json_object as opencode's structured output), user and safety_identifier (the end
 *              user: part of the conversation's identity, conversation.ts), and the fields whose
 *              value is the API's default (temperature 1, top_p 1, penalties 0, logprobs false,
 *              store false, tool_choice "none", service_tier "auto"/"default", modalities ["text"],
 *              null anywhere).
 *   refused    tools, functions, tool_choice (other than "none"), parallel_tool_calls: the agent
 *              runs its own tools (opencode's, under the configuration's permissions); a caller's
 *              functions would have to run in the caller, which opencode's loop cannot hand back.
 *              Sampling and length fields (temperature, top_p, penalties, seed, logit_bias,
 *              max_tokens, max_completion_tokens, stop, reasoning_effort, verbosity) with another
 *              value: opencode's prompt API takes none of them per request. audio, prediction,
 *              web_search_options, metadata, prompt_cache_key, logprobs/top_logprobs, store true,
 *              other service tiers and modalities, and any field the API does not have.
 *   messages   tool messages, tool_calls/function_call with content, image/audio/file parts and
 *              content: null are refused (the bridge never answers with a tool call, so a history
 *              holding one is not its own); the assistant fields of a returned message (refusal,
 *              annotations, audio, tool_calls empty or null) are accepted when empty.
 */
import * as crypto from "node:crypto";

export interface ChatMessage {
    role: string;
    content: string;
}

export type OutputFormat = { type: "text" } | { type: "json_schema"; schema: Record<string, unknown> };

export interface ChatRequest {
    model?: string;
    messages: ChatMessage[];
    stream: boolean;
    includeUsage: boolean;
    format: OutputFormat;
    /** The end user (user or safety_identifier), when given. */
    endUser?: string;
}

export class RequestError extends Error {
    constructor(readonly status: number, message: string, readonly type = "invalid_request_error", readonly code: string | null = null, readonly param: string | null = null, readonly headers: Record<string, string> = {}) {
        super(message);
    }
}

export const errorBody = (message: string, type: string, code: string | null = null, param: string | null = null) => ({ error: { message, type, param, code } });

const bad = (param: string, message: string, code: string | null = null) => new RequestError(400, `${param}: ${message}`, "invalid_request_error", code, param);
const unsupported = (param: string, why: string) => bad(param, `not supported by this bridge (${why})`, "unsupported_parameter");

/** A field given with its API default (or null) changes nothing and is accepted. */
const DEFAULTS: Record<string, (v: unknown) => boolean> = {
    temperature: (v) => v === 1,
    top_p: (v) => v === 1,
    frequency_penalty: (v) => v === 0,
    presence_penalty: (v) => v === 0,
    logprobs: (v) => v === false,
    store: (v) => v === false,
    tool_choice: (v) => v === "none",
    service_tier: (v) => v === "auto" || v === "default",
    modalities: (v) => Array.isArray(v) && v.length === 1 && v[0] === "text",
    n: (v) => v === 1,
};

const WHY: Record<string, string> = {
    tools: "the agent runs its own tools under the agent server's permissions; a caller's functions cannot be handed back",
    functions: "the agent runs its own tools under the agent server's permissions; a caller's functions cannot be handed back",
    function_call: "the bridge never answers with a function call",
    tool_choice: "only \"none\": the agent runs its own tools",
    parallel_tool_calls: "the bridge takes no tools",
    n: "one choice per request",
    temperature: "opencode's prompt API takes no sampling settings per request; only the default 1",
    top_p: "opencode's prompt API takes no sampling settings per request; only the default 1",
    frequency_penalty: "opencode's prompt API takes no sampling settings per request; only the default 0",
    presence_penalty: "opencode's prompt API takes no sampling settings per request; only the default 0",
    seed: "opencode's prompt API takes no seed",
    logit_bias: "opencode's prompt API takes no logit bias",
    max_tokens: "opencode's prompt API takes no length limit per request (the model's output limit is the agent server's configuration)",
    max_completion_tokens: "opencode's prompt API takes no length limit per request (the model's output limit is the agent server's configuration)",
    stop: "opencode's prompt API takes no stop sequences",
    reasoning_effort: "opencode's prompt API takes no reasoning effort per request",
    verbosity: "opencode's prompt API takes no verbosity",
    logprobs: "no log probabilities",
    top_logprobs: "no log probabilities",
    store: "answers are not stored for later retrieval",
    metadata: "answers are not stored, so there is nothing to tag",
    prompt_cache_key: "no prompt cache to key",
    service_tier: "only auto or default",
    modalities: "text only",
    audio: "text only",
    prediction: "no predicted outputs",
    web_search_options: "no web search option",
};

const HONOURED = new Set(["messages", "model", "stream", "stream_options", "response_format", "user", "safety_identifier"]);

/** The text of a message's content: a string, or an array of text parts; anything else is refused naming where. */
function contentText(content: unknown, at: string): string {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        return content.map((p, j) => {
            const part = p as { type?: unknown; text?: unknown };
            if (!p || typeof p !== "object") throw bad(`${at}[${j}]`, "expected a content part object");
            if (part.type !== "text") throw bad(`${at}[${j}].type`, `${JSON.stringify(part.type)} is not supported (text parts only)`, "unsupported_content");
            if (typeof part.text !== "string") throw bad(`${at}[${j}].text`, "expected a string");
            return part.text;
        }).join("\n");
    }
    if (content === null || content === undefined) throw bad(at, `${content === null ? "null" : "missing"}; expected a string or an array of text parts`);
    throw bad(at, "expected a string or an array of text parts");
}

const emptyish = (v: unknown) => v === null || v === undefined || (Array.isArray(v) && v.length === 0);

function parseMessage(m: unknown, i: number): ChatMessage {
    const at = `messages[${i}]`;
    if (!m || typeof m !== "object" || Array.isArray(m)) throw bad(at, "expected an object with role and content");
    const msg = m as Record<string, unknown>;
    if (typeof msg.role !== "string") throw bad(`${at}.role`, "expected a string");
    if (msg.role === "tool" || msg.role === "function") throw unsupported(`${at}.role`, `"${msg.role}" messages answer tool calls, which this bridge never makes`);
    if (!["system", "developer", "user", "assistant"].includes(msg.role)) throw bad(`${at}.role`, `"${msg.role}" is not a chat role (system, developer, user, assistant)`);
    for (const [k, v] of Object.entries(msg)) {
        if (k === "role" || k === "content") continue;
        if (msg.role === "assistant" && ["refusal", "annotations", "audio", "tool_calls", "function_call", "reasoning_content"].includes(k) && emptyish(v)) continue;
        if (k === "tool_calls" || k === "function_call") throw unsupported(`${at}.${k}`, "the bridge never answers with a tool call");
        if (k === "name") throw unsupported(`${at}.name`, "participant names are not passed to the agent server");
        throw bad(`${at}.${k}`, "not a field of a chat message");
    }
    return { role: msg.role, content: contentText(msg.content, `${at}.content`) };
}

function parseFormat(v: unknown): OutputFormat {
    if (v === null || v === undefined) return { type: "text" };
    const f = v as { type?: unknown; json_schema?: { schema?: unknown } };
    if (typeof v !== "object" || Array.isArray(v)) throw bad("response_format", "expected an object with a type");
    if (f.type === "text") return { type: "text" };
    if (f.type === "json_object") return { type: "json_schema", schema: { type: "object" } };
    if (f.type === "json_schema") {
        const schema = f.json_schema?.schema;
        if (!schema || typeof schema !== "object" || Array.isArray(schema)) throw bad("response_format.json_schema.schema", "expected a JSON Schema object");
        return { type: "json_schema", schema: schema as Record<string, unknown> };
    }
    throw bad("response_format.type", `${JSON.stringify(f.type)}; expected text, json_object or json_schema`);
}

export function parseChatRequest(body: unknown): ChatRequest {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new RequestError(400, "the request body must be a JSON object");
    const b = body as Record<string, unknown>;
    for (const [k, v] of Object.entries(b)) {
        if (HONOURED.has(k) || v === null) continue;
        if (DEFAULTS[k]?.(v)) continue;
        if (WHY[k]) throw unsupported(k, WHY[k]);
        throw bad(k, "unrecognized request argument", "unknown_parameter");
    }
    if (!Array.isArray(b.messages) || b.messages.length === 0) throw bad("messages", "expected a non-empty array");
    const messages = b.messages.map(parseMessage);
    if (messages[messages.length - 1].role !== "user") throw bad("messages", "the last message must be the user's");
    if (b.model !== undefined && b.model !== null && typeof b.model !== "string") throw bad("model", "expected a string");
    if (b.stream !== undefined && b.stream !== null && typeof b.stream !== "boolean") throw bad("stream", "expected a boolean");
    let includeUsage = false;
    if (b.stream_options !== undefined && b.stream_options !== null) {
        const o = b.stream_options as Record<string, unknown>;
        if (typeof o !== "object" || Array.isArray(o)) throw bad("stream_options", "expected an object");
        if (b.stream !== true) throw bad("stream_options", "only allowed with stream: true");
        for (const [k, v] of Object.entries(o)) {
            if (k === "include_usage" && (typeof v === "boolean" || v === null)) includeUsage = v === true;
            else if (k === "include_obfuscation" && (v === false || v === null)) continue;
            else throw bad(`stream_options.${k}`, k === "include_usage" ? "expected a boolean" : "not supported");
        }
    }
    let endUser: string | undefined;
    for (const k of ["user", "safety_identifier"] as const) {
        const v = b[k];
        if (v === undefined || v === null) continue;
        if (typeof v !== "string" || v.length > 512) throw bad(k, "expected a string of at most 512 characters");
        if (endUser !== undefined && v !== endUser) throw bad(k, "differs from user; give one end user");
        endUser = v;
    }
    return { model: (b.model ?? undefined) as string | undefined, messages, stream: b.stream === true, includeUsage, format: parseFormat(b.response_format), endUser };
}

export const completionId = () => `chatcmpl-${crypto.randomBytes(12).toString("hex")}`;

export interface Usage {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
}

export function completion(id: string, model: string, text: string, usage: Usage) {
    return {
        id,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text, refusal: null }, finish_reason: "stop", logprobs: null }],
        usage,
    };
}

export function chunk(id: string, model: string, delta: Record<string, unknown>, finish: string | null = null, withUsage = false) {
    return {
        id,
        object: "chat.completion.chunk",
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, delta, finish_reason: finish, logprobs: null }],
        ...(withUsage ? { usage: null } : {}),
    };
}

export const usageChunk = (id: string, model: string, usage: Usage) => ({ id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [], usage });

/** `text` in pieces of at most `size` characters (code points, so a surrogate pair is never split). */
export function pieces(text: string, size: number): string[] {
    const chars = Array.from(text);
    const out: string[] = [];
    for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(""));
    return out;
}

/**
 * The leading echo filter: a model that starts its answer by repeating the prompt has that
 * repetition (and the blank space after it) removed; an answer that is only the echo is kept.
 */
export function stripLeadingEcho(answer: string, prompt: string): string {
    const p = prompt.trim();
    if (!p) return answer;
    const a = answer.trimStart();
    if (!a.startsWith(p)) return answer;
    const rest = a.slice(p.length).replace(/^[\s:>-]+/, "");
    return rest.length > 0 ? rest : answer;
}

/**
 * What of a growing answer can be shown now under the echo filter: nothing while it may still be
 * an echo of the prompt, then what stripLeadingEcho will give for the whole answer (a prefix of it).
 */
export function visibleWithEchoFilter(answer: string, prompt: string, done: boolean): string {
    if (done) return stripLeadingEcho(answer, prompt);
    const p = prompt.trim();
    if (!p) return answer;
    const a = answer.trimStart();
    if (a.length < p.length) return p.startsWith(a) ? "" : answer;
    if (!a.startsWith(p)) return answer;
    return a.slice(p.length).replace(/^[\s:>-]+/, "");
}
