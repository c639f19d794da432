/** The OpenAI chat-completions shapes the bridge reads and writes. */
import * as crypto from "node:crypto";

export interface ChatMessage {
    role: string;
    content: unknown;
}

export interface ChatRequest {
    model?: string;
    messages: ChatMessage[];
    stream: boolean;
}

export class RequestError extends Error {
    constructor(readonly status: number, message: string, readonly type = "invalid_request_error", readonly code: string | null = null, readonly param: string | null = null) {
        super(message);
    }
}

export const errorBody = (message: string, type: string, code: string | null = null, param: string | null = null) => ({ error: { message, type, param, code } });

/** The text of a message's content: a string, or the text parts of an array of content parts. */
export function contentText(content: unknown): string | undefined {
    if (typeof content === "string") return content;
    if (Array.isArray(content)) {
        const texts = content.filter((p) => p && typeof p === "object" && (p as { type?: unknown }).type === "text" && typeof (p as { text?: unknown }).text === "string");
        if (texts.length !== content.length) return undefined;
        return texts.map((p) => (p as { text: string }).text).join("\n");
    }
    if (content === null) return "";
    return undefined;
}

export function parseChatRequest(body: unknown): ChatRequest {
    if (!body || typeof body !== "object" || Array.isArray(body)) throw new RequestError(400, "the request body must be a JSON object");
    const b = body as Record<string, unknown>;
    if (!Array.isArray(b.messages) || b.messages.length === 0) throw new RequestError(400, "messages must be a non-empty array", "invalid_request_error", null, "messages");
    const messages: ChatMessage[] = b.messages.map((m, i) => {
        if (!m || typeof m !== "object" || typeof (m as ChatMessage).role !== "string") throw new RequestError(400, `messages[${i}] must be an object with a role`, "invalid_request_error", null, `messages[${i}]`);
        const msg = m as ChatMessage;
        if (!["system", "developer", "user", "assistant", "tool"].includes(msg.role)) throw new RequestError(400, `messages[${i}].role: "${msg.role}" is not a chat role`, "invalid_request_error", null, `messages[${i}].role`);
        if (contentText(msg.content) === undefined) throw new RequestError(400, `messages[${i}].content must be a string or an array of text parts`, "invalid_request_error", null, `messages[${i}].content`);
        return { role: msg.role, content: contentText(msg.content) };
    });
    if (messages[messages.length - 1].role !== "user") throw new RequestError(400, "the last message must be the user's", "invalid_request_error", null, "messages");
    if (b.model !== undefined && typeof b.model !== "string") throw new RequestError(400, "model must be a string", "invalid_request_error", null, "model");
    if (b.stream !== undefined && typeof b.stream !== "boolean") throw new RequestError(400, "stream must be a boolean", "invalid_request_error", null, "stream");
    return { model: b.model as string | undefined, messages, stream: b.stream === true };
}

export const completionId = () => `chatcmpl-${crypto.randomBytes(12).toString("hex")}`;

export function completion(id: string, model: string, text: string, usage?: { input?: number; output?: number }) {
    const prompt = usage?.input ?? 0;
    const out = usage?.output ?? 0;
    return {
        id,
        object: "chat.completion",
        created: Math.floor(Date.now() / 1000),
        model,
        choices: [{ index: 0, message: { role: "assistant", content: text }, finish_reason: "stop" }],
        usage: { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out },
    };
}

export function chunk(id: string, model: string, delta: Record<string, string>, finish: string | null = null) {
    return { id, object: "chat.completion.chunk", created: Math.floor(Date.now() / 1000), model, choices: [{ index: 0, delta, finish_reason: finish }] };
}

/** The text cut into pieces of `size` characters (code points, so no surrogate pair is split). */
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
