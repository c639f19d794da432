/**
 * One turn in an agent-server session: the prompt, and the session's events while it runs.
 *
 * - Text: the assistant's text parts as opencode streams them (message.part.updated starts a part,
 *   message.part.delta adds to it), handed on as the answer so far: the text parts of the turn's
 *   assistant messages in order, each without trailing white space until more follows (opencode
 *   trims a finished part's end), so what was handed on is always a prefix of the final answer.
 * - Upstream trouble: opencode retries a failed model call without end (src/session/processor.ts
 *   and retry.ts in 1.2.27: 429, 408, 409, 5xx and connection failures, after Retry-After or 2 s
 *   doubling to 30 s; no setting limits it). Its first `session.status` of type `retry` ends the
 *   turn here: the bridge aborts the session before the retry is made and answers with what the
 *   status says (UpstreamFailure). A failure opencode does not retry (401, 400, ...) ends the
 *   prompt with the assistant message's error, which carries the model API's status.
 * - Asks: a permission request or question in the session is rejected at once when the settings
 *   say so (nobody behind the OpenAI API can answer it).
 * - Every message the turn created is recorded, so a failed turn can be taken out again.
 */
import { AgentError, type AgentEvent, type AgentServer, type PromptBody, type PromptResult } from "./agentServer";

/** A model failure, as the client gets it: status 429 or 502 (or 400 for the caller's own request), the cause, Retry-After when known. */
export class UpstreamFailure extends AgentError {
    constructor(message: string, readonly httpStatus: number, readonly code: string, readonly retryAfterSeconds?: number) {
        super(message, "status", httpStatus);
    }
}

const RATE_LIMITED = /rate.?limit|too many requests|\b429\b|quota|throttl/i;

/**
 * What opencode's retry status means for the client. opencode's status gives the model API's
 * message and when it will retry (Retry-After, or its own 2 s · 2^(attempt-1)), not the HTTP status:
 * a message that says rate limit (or opencode's own words for it) is 429, anything else 502.
 */
export function retryFailure(status: { attempt?: number; message?: string; next?: number }, now: number): UpstreamFailure {
    const message = status.message ?? "the model API failed";
    const delay = typeof status.next === "number" ? status.next - now : undefined;
    const own = 2000 * 2 ** ((status.attempt ?? 1) - 1);
    // A delay other than opencode's own back-off came from the model API's Retry-After.
    const retryAfter = delay !== undefined && Math.abs(delay - own) > 250 && delay > 0 ? Math.ceil(delay / 1000) : undefined;
    if (RATE_LIMITED.test(message)) return new UpstreamFailure(`the model API is rate limiting: ${message}`, 429, "rate_limit_exceeded", retryAfter);
    return new UpstreamFailure(`the model API failed: ${message}`, 502, "upstream_error");
}

/** The failure a finished turn reports (its assistant message's error), or undefined. */
export function resultFailure(r: PromptResult): UpstreamFailure | undefined {
    const err = r.info?.error;
    if (!err) return undefined;
    const data = err.data ?? {};
    const message = data.message ?? err.name ?? "unknown error";
    const status = data.statusCode;
    if (err.name === "ContextOverflowError") return new UpstreamFailure(`the conversation is longer than the model's context: ${message}`, 400, "context_length_exceeded");
    if (err.name === "StructuredOutputError") return new UpstreamFailure(`the model did not answer in the requested format: ${message}`, 502, "structured_output_failed");
    if (status === 429) return new UpstreamFailure(`the model API is rate limiting (429): ${message}`, 429, "rate_limit_exceeded");
    if (status === 400 || status === 413 || status === 422) return new UpstreamFailure(`the model API refused the request (${status}): ${message}`, 400, "upstream_rejected_request");
    const what = status === 401 || status === 403 ? `refused the agent server's key (${status})` : status ? `failed (${status})` : `failed`;
    return new UpstreamFailure(`the model API ${what}: ${err.name ?? "error"}: ${message}`, 502, status === 401 || status === 403 ? "upstream_auth" : "upstream_error");
}

/** The assistant's text of a finished turn (or its structured output as JSON). */
export function answerOf(r: PromptResult): string {
    if (r.info?.structured !== undefined) return JSON.stringify(r.info.structured);
    return (r.parts ?? []).filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string").map((p) => p.text).join("");
}

export interface TurnOptions {
    signal: AbortSignal;
    rejectAsks: boolean;
    /** The answer so far (a prefix of the final one), whenever it grows. */
    onText?: (text: string) => void;
    log: (line: string) => void;
}

export interface TurnOutcome {
    result?: PromptResult;
    failure?: Error;
    /** IDs of the messages the turn created, in order. */
    messages: string[];
}

/**
 * Runs one prompt in session `id` (the event stream must be connected). Never throws: the outcome
 * says. When the turn must stop (a retry status, the caller's signal) the session is aborted in the
 * agent server and the prompt's own answer awaited (10 s at most), so opencode has written its last
 * message before anything is taken out again and no model call follows.
 */
export async function runTurn(agent: AgentServer, id: string, body: PromptBody, o: TurnOptions): Promise<TurnOutcome> {
    const record = new TurnRecord();
    const messages = record.messages;
    let failed: Error | undefined;
    const post = new AbortController();
    let aborted: Promise<void> | undefined;
    const stop = (e: Error) => {
        failed ??= e;
        if (aborted) return;
        aborted = agent.abort(id).catch((err) => o.log(`session ${id}: abort failed: ${(err as Error).message}`));
        setTimeout(() => post.abort(new AgentError("the agent server did not end the aborted turn within 10 s", "timeout")), 10_000).unref();
    };
    const onOuter = () => stop(o.signal.reason instanceof Error ? o.signal.reason : new AgentError("the client went away", "aborted"));

    const onEvent = (e: AgentEvent) => {
        const p = e.properties ?? {};
        switch (e.type) {
            case "message.updated":
                record.message(p.info);
                break;
            case "message.part.updated":
                if (record.part(p.part) && !failed) o.onText?.(record.shown());
                break;
            case "message.part.delta":
                if (record.delta(p) && !failed) o.onText?.(record.shown());
                break;
            case "session.status":
                if (p.status?.type === "retry") stop(retryFailure(p.status, Date.now()));
                break;
            case "permission.asked":
            case "question.asked":
                if (o.rejectAsks && p.id) rejectAsk(agent, id, e, o.log);
                break;
        }
    };
    const unwatch = agent.watch(id, onEvent);
    if (o.signal.aborted) onOuter();
    else o.signal.addEventListener("abort", onOuter, { once: true });
    try {
        const result = await agent.prompt(id, body, post.signal);
        await aborted;
        if (failed) return { failure: failed, messages, result };
        const failure = resultFailure(result);
        return failure ? { failure, messages, result } : { result, messages };
    } catch (e) {
        if (!aborted) stop(e as Error);
        await aborted;
        return { failure: failed ?? (e as Error), messages };
    } finally {
        unwatch();
        o.signal.removeEventListener("abort", onOuter);
    }
}

/** What a turn's events tell: the messages it created, in order, and its assistant text parts. */
class TurnRecord {
    readonly messages: string[] = [];
    private readonly roles = new Map<string, string>();
    private readonly parts: { id: string; text: string; done: boolean }[] = [];

    /** message.updated: each message once. */
    message(info: { id?: string; role: string } | undefined): void {
        if (info?.id && !this.roles.has(info.id)) {
            this.roles.set(info.id, info.role);
            this.messages.push(info.id);
        }
    }

    /** message.part.updated; whether it was an assistant's text part. */
    part(part: any): boolean {
        if (part?.type !== "text" || this.roles.get(part.messageID) !== "assistant" || part.synthetic || part.ignored) return false;
        let known = this.parts.find((x) => x.id === part.id);
        if (!known) this.parts.push((known = { id: part.id, text: "", done: false }));
        if (typeof part.text === "string" && part.text.length >= known.text.length) known.text = part.text;
        if (part.time?.end) known.done = true;
        return true;
    }

    /** message.part.delta; whether it added to an assistant's text part. */
    delta(p: any): boolean {
        if (p.field !== "text" || this.roles.get(p.messageID) !== "assistant") return false;
        const known = this.parts.find((x) => x.id === p.partID);
        if (!known || typeof p.delta !== "string") return false;
        known.text += p.delta;
        return true;
    }

    /** The answer so far. */
    shown(): string {
        return this.parts.map((p, i) => (p.done || i < this.parts.length - 1 ? p.text.trimEnd() : p.text.replace(/\s+$/, ""))).join("");
    }
}

/** Rejects the permission request or question `e` asked in session `id`. */
function rejectAsk(agent: AgentServer, id: string, e: AgentEvent, log: (line: string) => void): void {
    const p = e.properties;
    if (e.type === "permission.asked") {
        log(`session ${id}: opencode asked for permission ${p.permission ?? ""}; rejected (nobody can answer through the bridge)`);
        agent.rejectPermission(p.id).catch((err) => log(`session ${id}: rejecting a permission request failed: ${(err as Error).message}`));
    } else {
        log(`session ${id}: opencode asked a question; rejected (nobody can answer through the bridge)`);
        agent.rejectQuestion(p.id).catch((err) => log(`session ${id}: rejecting a question failed: ${(err as Error).message}`));
    }
}

/**
 * Takes a failed turn out of its session (runTurn has ended it): deletes the messages the turn
 * created, so the session is as it was before it (a retried request is then one turn).
 */
export async function undoTurn(agent: AgentServer, id: string, messages: string[], log: (line: string) => void): Promise<void> {
    for (const m of [...messages].reverse()) {
        await agent.deleteMessage(id, m).catch((e) => log(`session ${id}: message ${m} of a failed turn was not deleted: ${(e as Error).message}`));
    }
}
