/**
 * A chat completion (POST /v1/chat/completions): one prompt in one agent-server session
 * (conversation.ts says which and how continuations of one conversation are serialised; turn.ts
 * how the turn runs). Outcomes (httpFailure.ts maps the failures): 400 for a request field the
 * bridge cannot honour (openai.ts), 404 for another model; 413 for a body larger than
 * BRIDGE_REQUEST_MEMORY_BYTES and 503 while the bodies in hand fill it (bodyBudget.ts); 429
 * (Retry-After when the model API gave one) or 502 with the model API's own message when the model
 * call fails, at the first failure; 502 when the agent server is unreachable or refuses the bridge;
 * 504 when a turn takes longer than BRIDGE_UPSTREAM_TIMEOUT_MS; 503 once a shutdown has begun. A
 * failed turn is taken out of its session again (a new session deleted). A client that disconnects
 * has its turn aborted and taken out. The body's memory goes back as soon as the prompt is sent.
 *
 * Streaming: the text as opencode writes it, at most at the configured rate (stream.ts), as
 * server-sent events (responses.ts says in which order). A failure before the headers is an HTTP
 * status like a plain request's; after them one error event before `[DONE]`.
 */
import * as crypto from "node:crypto";
import type * as http from "node:http";
import { AgentError, type AgentServer, type PromptBody } from "./agentServer";
import type { BodyBudget } from "./bodyBudget";
import { ConversationKey, CONVERSATION, FRESH, lockConversation, systemText, transcript, type Held } from "./conversation";
import { httpFailure, ShuttingDown } from "./httpFailure";
import { completion, completionId, parseChatRequest, RequestError, stripLeadingEcho, visibleWithEchoFilter, type ChatMessage, type ChatRequest, type Usage } from "./openai";
import { EventStream, sendJson } from "./responses";
import type { Settings } from "./settings";
import { Pacer } from "./stream";
import { answerOf, runTurn, undoTurn, UpstreamFailure, type TurnOutcome } from "./turn";

/** A running chat, as the shutdown sees it: its abort and its end. */
export interface ActiveChat {
    ctl: AbortController;
    done: Promise<void>;
}

/** What a chat uses of the bridge around it. */
export interface ChatContext {
    settings: Settings;
    agent: AgentServer;
    log: (line: string) => void;
    /** DEFAULT_MODEL as opencode names a model. */
    model: { providerID: string; modelID: string };
    /** How long a conversation's lock holds against the other replicas (conversation.ts). */
    leaseMs: number;
    bodies: BodyBudget;
    active: Set<ActiveChat>;
    /** Whether a shutdown has begun. */
    draining: () => boolean;
    /** Hands over work the shutdown waits for (a lock's release). */
    later: (p: Promise<unknown>) => void;
}

export async function chat(c: ChatContext, req: http.IncomingMessage, res: http.ServerResponse, clientKey: string): Promise<void> {
    if (c.draining()) throw new ShuttingDown();
    const { value, release } = await c.bodies.read(req);
    let body, name;
    try {
        body = parseChatRequest(value);
        name = resolveModel(c, body.model);
    } catch (e) {
        release();
        throw e;
    }
    return new ChatTurn(c, res, body, name, release).run(clientKey);
}

function resolveModel(c: ChatContext, requested: string | undefined): string {
    const modelId = c.settings.defaultModel;
    if (requested === undefined || requested === modelId || requested === c.model.modelID) return modelId;
    throw new RequestError(404, `The model \`${requested}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found", "model");
}

/** One chat from its parsed request to its answer (or failure), registered as active meanwhile. */
class ChatTurn {
    private readonly id: string;
    private readonly ctl: AbortController;
    private readonly entry: ActiveChat;
    private settle!: () => void;
    private readonly timer: NodeJS.Timeout;
    private readonly onClose: () => void;
    private readonly out: EventStream;
    private readonly last: ChatMessage;
    private readonly prompt: string;
    private readonly pacer?: Pacer;
    private held?: Held;
    private sessionId?: string;
    private fresh = false;
    private outcome?: TurnOutcome;

    constructor(private readonly c: ChatContext, private readonly res: http.ServerResponse, private readonly body: ChatRequest, private readonly name: string, private readonly release: () => void) {
        const s = c.settings;
        this.id = completionId();
        const ctl = (this.ctl = new AbortController());
        this.entry = { ctl, done: new Promise<void>((r) => (this.settle = r)) };
        c.active.add(this.entry);
        this.timer = setTimeout(() => ctl.abort(new AgentError("upstream time-out", "timeout")), s.upstreamTimeoutMs);
        this.onClose = () => {
            if (!res.writableEnded) ctl.abort(new AgentError("the client went away", "aborted"));
        };
        res.on("close", this.onClose);
        this.out = new EventStream(res, this.id, name, body.includeUsage, c.draining);
        this.last = body.messages[body.messages.length - 1];
        this.prompt = this.last.content;
        this.pacer = body.stream ? new Pacer(s.chunkSize, s.chunkDelayMs, (p) => this.out.text(p), c.log) : undefined;
        if (body.stream) this.out.keepAliveEvery(s.keepAliveMs);
    }

    async run(clientKey: string): Promise<void> {
        try {
            const key = new ConversationKey(clientKey, this.body.endUser);
            const text = await this.openSession(key);
            const answer = await this.runPrompt(key, text);
            await this.remember(key, answer);
            await this.deliver(answer);
        } catch (e) {
            await this.fail(e);
        } finally {
            if (this.held) this.c.later(this.held.release());
            this.out.stopKeepAlive();
            clearTimeout(this.timer);
            this.res.off("close", this.onClose);
            this.c.active.delete(this.entry);
            this.settle();
        }
    }

    /** The conversation's session (its lock taken) or a new one; what to prompt it with (a new one gets the history as a transcript). */
    private async openSession(key: ConversationKey): Promise<string> {
        const { agent, leaseMs } = this.c;
        const history = this.body.messages.slice(0, -1);
        for (const m of history) key.add(m);
        const hasTurns = history.some((m) => m.role === "user" || m.role === "assistant");
        await agent.connectEvents(this.ctl.signal);
        if (hasTurns) this.held = await lockConversation(agent, key.key(), leaseMs, this.ctl.signal);
        if (this.held?.session) {
            this.sessionId = this.held.session.id;
            return this.prompt;
        }
        // A title other than opencode's default also keeps it from asking the model for one.
        this.sessionId = (await agent.createSession(`${FRESH}${crypto.randomBytes(8).toString("hex")}`, this.ctl.signal)).id;
        this.fresh = true;
        return transcript(history, this.last);
    }

    /** Sends the prompt and waits for the turn's end; the answer as the client gets it. */
    private async runPrompt(key: ConversationKey, text: string): Promise<string> {
        const { settings: s, agent, log } = this.c;
        const pacer = this.pacer;
        const promptBody: PromptBody = {
            model: this.c.model,
            agent: s.agent,
            system: systemText(this.body.messages),
            ...(this.body.format.type === "json_schema" ? { format: this.body.format } : {}),
            parts: [{ type: "text", text }],
        };
        key.add(this.last);
        const running = runTurn(agent, this.sessionId!, promptBody, {
            signal: this.ctl.signal,
            rejectAsks: s.rejectAsks,
            log,
            onText: pacer ? (t) => pacer.offer(s.leadingEchoFilter ? visibleWithEchoFilter(t, this.prompt, false) : t) : undefined,
        });
        // The prompt is on its way (runTurn built and sent its payload before its first wait): the body's memory goes back.
        this.release();
        this.body.messages = [];
        this.outcome = await running;
        if (this.outcome.failure) throw this.outcome.failure;
        const answer = answerOf(this.outcome.result!);
        return s.leadingEchoFilter ? stripLeadingEcho(answer, this.prompt) : answer;
    }

    /** The conversation's next key as its session's title; the lock given back. */
    private async remember(key: ConversationKey, answer: string): Promise<void> {
        const { agent, log } = this.c;
        // The next turn's prefix is this history plus the answer as the client received it. A
        // failure here costs only continuity (the next turn starts a session with a transcript).
        const sid = this.sessionId!;
        await agent.setTitle(sid, `${CONVERSATION}${key.add({ role: "assistant", content: answer }).key()}`, AbortSignal.timeout(10_000))
            .catch((e) => log(`session ${sid}: the conversation key was not stored: ${(e as Error).message}`));
        if (this.held) this.c.later(this.held.release());
        this.held = undefined;
        clearTimeout(this.timer);
    }

    private async deliver(answer: string): Promise<void> {
        const usage = usageOf(this.outcome!.result!.info?.tokens);
        if (!this.pacer) return sendJson(this.res, 200, completion(this.id, this.name, answer, usage), this.c.draining());
        this.pacer.finish(answer);
        await this.pacer.finished;
        this.out.finish(usage);
    }

    /** A failed turn: taken out of its session, then answered, unless the client went away. */
    private async fail(e: unknown): Promise<void> {
        this.release();
        clearTimeout(this.timer);
        this.pacer?.cancel();
        const why = this.ctl.signal.aborted && !(e instanceof UpstreamFailure) ? this.ctl.signal.reason : e;
        if (this.sessionId) await this.takeOut(this.sessionId, why);
        if (why instanceof AgentError && why.kind === "aborted" && !(why instanceof ShuttingDown)) return;
        const f = httpFailure(why, this.c.settings.upstreamTimeoutMs);
        if (f.status >= 500 || f.status === 429) this.c.log(`chat ${this.id}: ${f.status} ${(why as Error).message}`);
        if (!this.res.headersSent) return sendJson(this.res, f.status, f.body, this.c.draining(), f.headers);
        this.out.fail(f.body);
    }

    /** Deletes the failed turn's messages from session `sid`, or the session when the turn was its first. */
    private async takeOut(sid: string, why: unknown): Promise<void> {
        const { agent, log } = this.c;
        if (this.fresh) await agent.deleteSession(sid).catch((err) => log(`session ${sid}: a failed new conversation was not deleted: ${(err as Error).message}`));
        else await undoTurn(agent, sid, this.outcome?.messages ?? [], log);
        log(`session ${sid}: turn ${why instanceof AgentError ? why.kind : "error"} (${(why as Error).message}); ${this.fresh ? "its new session deleted" : "taken out of the session"}`);
    }
}

/** OpenAI usage from the assistant message's tokens (cache reads and writes count as prompt tokens, reasoning as completion). */
function usageOf(t: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } } | undefined): Usage {
    const prompt = (t?.input ?? 0) + (t?.cache?.read ?? 0) + (t?.cache?.write ?? 0);
    const out = (t?.output ?? 0) + (t?.reasoning ?? 0);
    return { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out };
}
