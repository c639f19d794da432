/**
 * The bridge's HTTP server: an OpenAI-compatible API under /v1 in front of one agent server, plus
 * /health (liveness: the process answers) and /ready (readiness: the agent server answers with the
 * bridge's credentials, its event stream is open and the chat agent exists). Nothing else is served.
 *
 * A chat completion is one prompt in one agent-server session (conversation.ts says which and how
 * continuations of one conversation are serialised; turn.ts how the turn runs). Outcomes: 401
 * without a valid client key; 400 for a request field the bridge cannot honour (openai.ts), 404
 * for another model; 413 for a body larger than BRIDGE_REQUEST_MEMORY_BYTES and 503 while the
 * bodies in hand fill it; 429 (Retry-After when the model API gave one) or 502 with the model
 * API's own message when the model call fails, at the first failure; 502 when the agent server is
 * unreachable or refuses the bridge; 504 when a turn takes longer than BRIDGE_UPSTREAM_TIMEOUT_MS;
 * 503 once a shutdown has begun. A failed turn is taken out of its session again. A client that
 * disconnects has its turn aborted and taken out.
 *
 * Streaming: headers and the role chunk go out with the first text (or after BRIDGE_KEEPALIVE_MS
 * without any, followed by a comment line every BRIDGE_KEEPALIVE_MS), then the text as opencode
 * writes it at most at the configured rate (stream.ts), a stop chunk, the usage chunk when
 * stream_options.include_usage asks for it, and `data: [DONE]`. A failure before the headers is an
 * HTTP status like a plain request's; after them one `data: {"error": ...}` event before `[DONE]`.
 */
import * as crypto from "node:crypto";
import * as http from "node:http";
import { StringDecoder } from "node:string_decoder";
import { AgentError, AgentServer, type PromptBody } from "./agentServer";
import { ClientKeys } from "./clientKeys";
import { ConversationKey, CONVERSATION, FRESH, LOCK, lockConversation, systemText, TITLE_PREFIX, transcript, type Held } from "./conversation";
import { chunk, completion, completionId, errorBody, parseChatRequest, RequestError, stripLeadingEcho, usageChunk, visibleWithEchoFilter, type Usage } from "./openai";
import type { Settings } from "./settings";
import { Pacer } from "./stream";
import { answerOf, runTurn, undoTurn, UpstreamFailure, type TurnOutcome } from "./turn";

export interface Bridge {
    server: http.Server;
    agent: AgentServer;
    /** Stops taking chats, lets running ones finish (at most `graceMs`), aborts the rest in the agent server, closes. */
    shutdown(graceMs: number): Promise<void>;
    /** Deletes the bridge's sessions idle longer than BRIDGE_SESSION_IDLE_MS; how many. */
    sweep(): Promise<number>;
}

class ShuttingDown extends AgentError {
    constructor() {
        super("the model bridge is shutting down; send the request again", "aborted");
    }
}

export function createBridge(s: Settings, log: (line: string) => void = (l) => console.log(l)): Bridge {
    const agent = new AgentServer(s.agentBase, s.agentUsername, s.agentPassword, log);
    const keys = new ClientKeys(s.apiKeysFile, log);
    const modelId = s.defaultModel;
    const slash = modelId.indexOf("/");
    const model = { providerID: modelId.slice(0, slash), modelID: modelId.slice(slash + 1) };
    const leaseMs = s.upstreamTimeoutMs + 60_000;
    const active = new Set<{ ctl: AbortController; done: Promise<void> }>();
    const background = new Set<Promise<unknown>>();
    let draining = false;
    let bodyBytes = 0;

    const later = (p: Promise<unknown>) => {
        const q = p.catch(() => {}).finally(() => background.delete(q));
        background.add(q);
    };

    const send = (res: http.ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}) => {
        if (res.headersSent) return;
        const text = JSON.stringify(body);
        res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...(draining ? { Connection: "close" } : {}), ...headers });
        res.end(text);
    };

    /** The body, held within BRIDGE_REQUEST_MEMORY_BYTES with every other body in hand; `release` gives its share back. */
    async function readBody(req: http.IncomingMessage): Promise<{ value: unknown; release: () => void }> {
        const budget = s.requestMemoryBytes;
        const declared = req.headers["content-length"] !== undefined ? Number(req.headers["content-length"]) : undefined;
        const tooLarge = () => new RequestError(413, `the request body is larger than ${budget} bytes (BRIDGE_REQUEST_MEMORY_BYTES, sized to the bridge's memory limit)`, "invalid_request_error", "request_too_large");
        if (declared !== undefined && declared > budget) throw tooLarge();
        let held = 0;
        const take = (n: number) => {
            if (bodyBytes + n > budget) throw new RequestError(503, "the model bridge holds as many request bodies as its memory allows; send the request again", "server_error", "bridge_busy", null, { "Retry-After": "1" });
            bodyBytes += n;
            held += n;
        };
        const release = () => {
            bodyBytes -= held;
            held = 0;
        };
        try {
            take(declared ?? 0);
            // Decoded as it arrives: the body is held once as text, not also as bytes.
            const decoder = new StringDecoder("utf8");
            const parts: string[] = [];
            let size = 0;
            for await (const c of req as AsyncIterable<Buffer>) {
                size += c.length;
                if (size > budget) throw tooLarge();
                if (size > held) take(size - held);
                parts.push(decoder.write(c));
            }
            parts.push(decoder.end());
            let text = parts.join("");
            parts.length = 0;
            try {
                return { value: JSON.parse(text), release };
            } catch {
                throw new RequestError(400, "the request body is not JSON");
            } finally {
                text = "";
            }
        } catch (e) {
            release();
            if (e instanceof RequestError && e.status >= 413) req.resume();
            throw e;
        }
    }

    function resolveModel(requested: string | undefined): string {
        if (requested === undefined || requested === modelId || requested === model.modelID) return modelId;
        throw new RequestError(404, `The model \`${requested}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found", "model");
    }

    function failure(e: unknown): { status: number; body: ReturnType<typeof errorBody>; headers: Record<string, string> } {
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
            if (e.kind === "timeout") return { status: 504, body: errorBody(`the agent server did not finish within ${s.upstreamTimeoutMs} ms (BRIDGE_UPSTREAM_TIMEOUT_MS); the turn was aborted and taken out of the session`, "upstream_error", "agent_server_timeout"), headers: {} };
            if (e.status === 401) return { status: 502, body: errorBody("the agent server refused the bridge's credentials", "upstream_error", "agent_server_auth"), headers: {} };
            if (e.kind === "unreachable") return { status: 502, body: errorBody("the agent server is unreachable", "upstream_error", "agent_server_unreachable"), headers: {} };
            return { status: 502, body: errorBody(e.message, "upstream_error", "agent_server_error"), headers: {} };
        }
        if (e instanceof RequestError) return { status: e.status, body: errorBody(e.message, e.type, e.code, e.param), headers: e.headers };
        return { status: 500, body: errorBody("internal error of the model bridge", "server_error", "internal_error"), headers: {} };
    }

    async function chat(req: http.IncomingMessage, res: http.ServerResponse, clientKey: string) {
        if (draining) throw new ShuttingDown();
        const { value, release } = await readBody(req);
        let body;
        try {
            body = parseChatRequest(value);
        } catch (e) {
            release();
            throw e;
        }
        const name = resolveModel(body.model);
        const id = completionId();
        const ctl = new AbortController();
        let settle!: () => void;
        const entry = { ctl, done: new Promise<void>((r) => (settle = r)) };
        active.add(entry);
        const timer = setTimeout(() => ctl.abort(new AgentError("upstream time-out", "timeout")), s.upstreamTimeoutMs);
        const onClose = () => {
            if (!res.writableEnded) ctl.abort(new AgentError("the client went away", "aborted"));
        };
        res.on("close", onClose);

        let headersOut = false;
        let lastWrite = Date.now();
        const withUsage = body.includeUsage;
        const headers = () => {
            if (headersOut || res.destroyed) return;
            headersOut = true;
            res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", Connection: draining ? "close" : "keep-alive", "X-Accel-Buffering": "no" });
            res.write(`data: ${JSON.stringify(chunk(id, name, { role: "assistant", content: "" }, null, withUsage))}\n\n`);
        };
        const event = (v: unknown) => {
            if (res.destroyed) return false;
            headers();
            res.write(`data: ${JSON.stringify(v)}\n\n`);
            lastWrite = Date.now();
            return true;
        };
        const last = body.messages[body.messages.length - 1];
        const prompt = last.content;
        const pacer = body.stream ? new Pacer(s.chunkSize, s.chunkDelayMs, (p) => event(chunk(id, name, { content: p }, null, withUsage)), log) : undefined;
        const keepAlive = body.stream
            ? setInterval(() => {
                if (res.destroyed || Date.now() - lastWrite < s.keepAliveMs - 5) return;
                headers();
                res.write(": working\n\n");
                lastWrite = Date.now();
            }, s.keepAliveMs)
            : undefined;

        let held: Held | undefined;
        let sessionId: string | undefined;
        let fresh = false;
        let outcome: TurnOutcome | undefined;
        try {
            const history = body.messages.slice(0, -1);
            const key = new ConversationKey(clientKey, body.endUser);
            for (const m of history) key.add(m);
            const hasTurns = history.some((m) => m.role === "user" || m.role === "assistant");
            await agent.connectEvents(ctl.signal);
            if (hasTurns) held = await lockConversation(agent, key.key(), leaseMs, ctl.signal);
            let text = prompt;
            if (held?.session) sessionId = held.session.id;
            else {
                // A title other than opencode's default also keeps it from asking the model for one.
                sessionId = (await agent.createSession(`${FRESH}${crypto.randomBytes(8).toString("hex")}`, ctl.signal)).id;
                fresh = true;
                text = transcript(history, last);
            }
            const promptBody: PromptBody = {
                model,
                agent: s.agent,
                system: systemText(body.messages),
                ...(body.format.type === "json_schema" ? { format: body.format } : {}),
                parts: [{ type: "text", text }],
            };
            key.add(last);
            const running = runTurn(agent, sessionId, promptBody, {
                signal: ctl.signal,
                rejectAsks: s.rejectAsks,
                log,
                onText: pacer ? (t) => pacer.offer(s.leadingEchoFilter ? visibleWithEchoFilter(t, prompt, false) : t) : undefined,
            });
            // The prompt is on its way (runTurn built and sent its payload before its first wait): the body's memory goes back.
            release();
            body.messages = [];
            outcome = await running;
            if (outcome.failure) throw outcome.failure;
            let answer = answerOf(outcome.result!);
            if (s.leadingEchoFilter) answer = stripLeadingEcho(answer, prompt);
            // The next turn's prefix is this history plus the answer as the client received it. A
            // failure here costs only continuity (the next turn starts a session with a transcript).
            const sid = sessionId;
            await agent.setTitle(sid, `${CONVERSATION}${key.add({ role: "assistant", content: answer }).key()}`, AbortSignal.timeout(10_000))
                .catch((e) => log(`session ${sid}: the conversation key was not stored: ${(e as Error).message}`));
            if (held) later(held.release());
            held = undefined;
            clearTimeout(timer);
            const usage = usageOf(outcome.result!.info?.tokens);

            if (!pacer) return send(res, 200, completion(id, name, answer, usage));
            pacer.finish(answer);
            await pacer.finished;
            if (res.destroyed) return;
            event(chunk(id, name, {}, "stop", withUsage));
            if (withUsage) event(usageChunk(id, name, usage));
            res.end("data: [DONE]\n\n");
        } catch (e) {
            release();
            clearTimeout(timer);
            pacer?.cancel();
            const why = ctl.signal.aborted && !(e instanceof UpstreamFailure) ? ctl.signal.reason : e;
            if (sessionId) {
                const sid = sessionId;
                if (fresh) await agent.deleteSession(sid).catch((err) => log(`session ${sid}: a failed new conversation was not deleted: ${(err as Error).message}`));
                else await undoTurn(agent, sid, outcome?.messages ?? [], log);
                log(`session ${sid}: turn ${why instanceof AgentError ? why.kind : "error"} (${(why as Error).message}); ${fresh ? "its new session deleted" : "taken out of the session"}`);
            }
            if (why instanceof AgentError && why.kind === "aborted" && !(why instanceof ShuttingDown)) return;
            const f = failure(why);
            if (f.status >= 500 || f.status === 429) log(`chat ${id}: ${f.status} ${(why as Error).message}`);
            if (!res.headersSent) return send(res, f.status, f.body, f.headers);
            if (!res.destroyed) {
                res.write(`data: ${JSON.stringify(f.body)}\n\n`);
                res.end("data: [DONE]\n\n");
            }
        } finally {
            if (held) later(held.release());
            if (keepAlive) clearInterval(keepAlive);
            clearTimeout(timer);
            res.off("close", onClose);
            active.delete(entry);
            settle();
        }
    }

    async function ready(): Promise<{ ok: boolean; status: string }> {
        if (draining) return { ok: false, status: "shutting down" };
        try {
            const signal = AbortSignal.timeout(5000);
            if (!(await agent.healthy(signal))) return { ok: false, status: "agent server unhealthy" };
            await agent.connectEvents(signal);
            if (!(await agent.agentNames(signal)).includes(s.agent)) return { ok: false, status: `the agent server has no agent ${s.agent} (BRIDGE_AGENT)` };
            return { ok: true, status: "ready" };
        } catch (e) {
            return { ok: false, status: `agent server: ${(e as Error).message}` };
        }
    }

    async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
        const path = (req.url ?? "/").split("?")[0];
        const method = req.method ?? "GET";
        if (path === "/health") return method === "GET" || method === "HEAD" ? send(res, 200, { status: "ok" }) : send(res, 405, errorBody("method not allowed", "invalid_request_error"));
        if (path === "/ready") {
            const r = await ready();
            return send(res, r.ok ? 200 : 503, { status: r.status });
        }
        if (!path.startsWith("/v1/")) return send(res, 404, errorBody("no such route", "invalid_request_error", "not_found"));
        const clientKey = keys.check(req.headers.authorization);
        if (!clientKey) {
            res.setHeader("WWW-Authenticate", "Bearer");
            return send(res, 401, errorBody("Incorrect API key provided. Send Authorization: Bearer <key>.", "invalid_request_error", "invalid_api_key"));
        }
        const modelObject = { id: modelId, object: "model", created: 0, owned_by: model.providerID };
        if (path === "/v1/models") return method === "GET" ? send(res, 200, { object: "list", data: [modelObject] }) : send(res, 405, errorBody("method not allowed", "invalid_request_error"));
        if (path.startsWith("/v1/models/")) {
            const raw = path.slice("/v1/models/".length);
            let wanted: string | undefined;
            try {
                wanted = decodeURIComponent(raw);
            } catch {
                wanted = undefined;
            }
            if (wanted === modelId) return send(res, 200, modelObject);
            return send(res, 404, errorBody(wanted === undefined ? "The model id is not valid percent-encoding" : `The model \`${wanted}\` does not exist`, "invalid_request_error", "model_not_found"));
        }
        if (path === "/v1/chat/completions") {
            if (method !== "POST") return send(res, 405, errorBody("method not allowed", "invalid_request_error"));
            return chat(req, res, clientKey);
        }
        return send(res, 404, errorBody("no such route", "invalid_request_error", "not_found"));
    }

    const server = http.createServer((req, res) => {
        const started = Date.now();
        res.on("finish", () => {
            if (req.url !== "/health" && req.url !== "/ready") log(`${req.method} ${(req.url ?? "").split("?")[0].slice(0, 200)} ${res.statusCode} ${Date.now() - started}ms`);
        });
        handle(req, res).catch((e) => {
            const f = failure(e);
            if (f.status >= 500 && !(e instanceof RequestError) && !(e instanceof ShuttingDown)) log(`${req.method} ${(req.url ?? "").slice(0, 200)}: ${(e as Error).stack ?? e}`);
            if (!res.headersSent) send(res, f.status, f.body, f.headers);
            else res.destroy();
        });
    });
    server.keepAliveTimeout = 65_000;
    server.requestTimeout = 0; // a long model turn is bounded by the upstream time-out instead

    async function sweep(): Promise<number> {
        if (s.sessionIdleMs === 0) return 0;
        const now = Date.now();
        const signal = AbortSignal.timeout(30_000);
        const idle = (await agent.idleSessions(TITLE_PREFIX, now - s.sessionIdleMs, 500, signal)).filter((x) => x.title.startsWith(TITLE_PREFIX));
        if (idle.length === 0) return 0;
        const working = await agent.workingSessions(signal);
        const locks = (await agent.searchSessions(LOCK, signal)).filter((x) => x.title.startsWith(LOCK) && x.time.created > now - leaseMs);
        const locked = new Set(locks.map((x) => x.title.slice(LOCK.length, LOCK.length + 40)));
        let n = 0;
        for (const x of idle) {
            if (working[x.id] && working[x.id].type !== "idle") continue;
            if (x.title.startsWith(LOCK) && x.time.created > now - leaseMs) continue;
            if (x.title.startsWith(CONVERSATION) && locked.has(x.title.slice(CONVERSATION.length))) continue;
            await agent.deleteSession(x.id, signal).then(() => n++, (e) => log(`session ${x.id}: idle, but not deleted: ${(e as Error).message}`));
        }
        if (n > 0) log(`model bridge: ${n} session(s) idle longer than ${s.sessionIdleMs} ms deleted`);
        return n;
    }
    let sweeping = false;
    const sweeper = s.sessionIdleMs > 0
        ? setInterval(() => {
            if (sweeping || draining) return;
            sweeping = true;
            sweep().catch((e) => log(`model bridge: the idle-session sweep failed: ${(e as Error).message}`)).finally(() => (sweeping = false));
        }, Math.max(1000, Math.min(60_000, Math.floor(s.sessionIdleMs / 2))))
        : undefined;
    sweeper?.unref();

    return {
        server,
        agent,
        sweep,
        async shutdown(graceMs: number) {
            draining = true;
            if (sweeper) clearInterval(sweeper);
            const closed = new Promise<void>((resolve) => server.close(() => resolve()));
            server.closeIdleConnections();
            const all = () => Promise.all([...active].map((a) => a.done));
            let timer: NodeJS.Timeout | undefined;
            const waited = await Promise.race([all().then(() => true), new Promise<boolean>((r) => (timer = setTimeout(() => r(false), graceMs)))]);
            clearTimeout(timer);
            if (!waited) {
                log(`model bridge: ${active.size} chat(s) still running after ${graceMs} ms; aborting them in the agent server`);
                for (const a of active) a.ctl.abort(new ShuttingDown());
                await Promise.race([all(), new Promise((r) => setTimeout(r, 15_000))]);
            }
            await Promise.race([Promise.all([...background]), new Promise((r) => setTimeout(r, 5_000))]);
            server.closeAllConnections();
            await Promise.race([closed, new Promise((r) => setTimeout(r, 1000))]);
            agent.close();
        },
    };
}

/** OpenAI usage from the assistant message's tokens (cache reads and writes count as prompt tokens, reasoning as completion). */
function usageOf(t: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } } | undefined): Usage {
    const prompt = (t?.input ?? 0) + (t?.cache?.read ?? 0) + (t?.cache?.write ?? 0);
    const out = (t?.output ?? 0) + (t?.reasoning ?? 0);
    return { prompt_tokens: prompt, completion_tokens: out, total_tokens: prompt + out };
}
