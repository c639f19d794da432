/**
 * The bridge's HTTP server: an OpenAI-compatible API under /v1 in front of one agent server, plus
 * /health (liveness: the process answers) and /ready (readiness: the agent server answers with the
 * bridge's credentials). Nothing else is served.
 *
 * A chat completion is one prompt in one agent-server session (conversation.ts says which); the
 * answer is the assistant's text. Outcomes: 401 without a valid client key; 400 for a malformed
 * request; 404 for another model; 502 when the agent server is unreachable, refuses the bridge or
 * reports a model error; 504 when it takes longer than BRIDGE_UPSTREAM_TIMEOUT_MS (the session is
 * aborted); a client that disconnects has its session aborted. A streamed answer sends its
 * headers and the role chunk at once, comment lines while the agent works, then the text in
 * pieces of OPENAI_STREAM_CHUNK_SIZE characters every OPENAI_STREAM_CHUNK_DELAY_MS, then
 * `data: [DONE]`; an error after the headers is one `data: {"error": ...}` event before `[DONE]`.
 */
import * as http from "node:http";
import { AgentError, AgentServer, type PromptResult } from "./agentServer";
import { ClientKeys } from "./clientKeys";
import { conversationTitle, systemText, TITLE_PREFIX, transcript } from "./conversation";
import { chunk, completion, completionId, errorBody, parseChatRequest, pieces, RequestError, stripLeadingEcho } from "./openai";
import type { Settings } from "./settings";
import * as crypto from "node:crypto";

const MAX_BODY = 8 * 1024 * 1024;

export interface Bridge {
    server: http.Server;
    agent: AgentServer;
    /** Stops accepting, lets running requests finish (at most `graceMs`), closes the agent connections. */
    shutdown(graceMs: number): Promise<void>;
}

export function createBridge(s: Settings, log: (line: string) => void = (l) => console.log(l)): Bridge {
    const agent = new AgentServer(s.agentBase, s.agentUsername, s.agentPassword);
    const keys = new ClientKeys(s.apiKeysFile);
    const modelId = s.defaultModel;
    const [providerID, ...rest] = modelId.split("/");
    const model = { providerID, modelID: rest.join("/") };

    const send = (res: http.ServerResponse, status: number, body: unknown) => {
        if (res.headersSent) return;
        const text = JSON.stringify(body);
        res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
        res.end(text);
    };

    async function readBody(req: http.IncomingMessage): Promise<unknown> {
        const chunks: Buffer[] = [];
        let size = 0;
        for await (const c of req as AsyncIterable<Buffer>) {
            size += c.length;
            if (size > MAX_BODY) throw new RequestError(413, `the request body is larger than ${MAX_BODY} bytes`);
            chunks.push(c);
        }
        try {
            return JSON.parse(Buffer.concat(chunks).toString("utf8"));
        } catch {
            throw new RequestError(400, "the request body is not JSON");
        }
    }

    function resolveModel(requested: string | undefined): string {
        if (requested === undefined || requested === modelId || requested === model.modelID) return modelId;
        throw new RequestError(404, `The model \`${requested}\` does not exist or you do not have access to it.`, "invalid_request_error", "model_not_found", "model");
    }

    function upstreamFailure(e: unknown): { status: number; body: ReturnType<typeof errorBody> } {
        if (e instanceof AgentError) {
            if (e.kind === "timeout") return { status: 504, body: errorBody(`the agent server did not finish within ${s.upstreamTimeoutMs} ms; the session was aborted`, "upstream_error", "agent_server_timeout") };
            if (e.status === 401) return { status: 502, body: errorBody("the agent server refused the bridge's credentials", "upstream_error", "agent_server_auth") };
            if (e.kind === "unreachable") return { status: 502, body: errorBody("the agent server is unreachable", "upstream_error", "agent_server_unreachable") };
            return { status: 502, body: errorBody(e.message, "upstream_error", "agent_server_error") };
        }
        if (e instanceof RequestError) return { status: e.status, body: errorBody(e.message, e.type, e.code, e.param) };
        return { status: 500, body: errorBody("internal error of the model bridge", "server_error", "internal_error") };
    }

    /** The assistant's text of a finished turn, or the model error it reports. */
    function answerOf(r: PromptResult): string {
        if (r.info?.error) {
            const msg = r.info.error.data?.message ?? r.info.error.name ?? "unknown error";
            throw new AgentError(`the model failed: ${r.info.error.name ?? "error"}: ${msg}`, "status", 502);
        }
        return (r.parts ?? []).filter((p) => p.type === "text" && !p.synthetic && !p.ignored && typeof p.text === "string").map((p) => p.text).join("");
    }

    async function chat(req: http.IncomingMessage, res: http.ServerResponse, clientKey: string) {
        const body = parseChatRequest(await readBody(req));
        const name = resolveModel(body.model);
        const history = body.messages.slice(0, -1);
        const last = body.messages[body.messages.length - 1];
        const hasTurns = history.some((m) => m.role !== "system" && m.role !== "developer");

        const ctl = new AbortController();
        const timer = setTimeout(() => ctl.abort(new DOMException("upstream time-out", "TimeoutError")), s.upstreamTimeoutMs);
        const onClose = () => {
            if (!res.writableEnded) ctl.abort(new DOMException("client closed", "AbortError"));
        };
        res.on("close", onClose);
        let sessionId: string | undefined;
        let keepAlive: NodeJS.Timeout | undefined;
        const id = completionId();
        try {
            const found = hasTurns ? await agent.findSessionByTitle(conversationTitle(clientKey, history), ctl.signal) : undefined;
            // A title other than opencode's default also keeps it from asking the model for one.
            const session = found ?? (await agent.createSession(`${TITLE_PREFIX}new-${crypto.randomBytes(8).toString("hex")}`, ctl.signal));
            sessionId = session.id;
            const text = found ? String(last.content) : transcript(history, last);

            if (body.stream) {
                res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", Connection: "keep-alive", "X-Accel-Buffering": "no" });
                res.write(`data: ${JSON.stringify(chunk(id, name, { role: "assistant", content: "" }))}\n\n`);
                keepAlive = setInterval(() => {
                    if (!res.destroyed) res.write(": working\n\n");
                }, s.keepAliveMs);
            }
            const result = await agent.prompt(session.id, { model, system: systemText(body.messages), parts: [{ type: "text", text }] }, ctl.signal);
            let answer = answerOf(result);
            if (s.leadingEchoFilter) answer = stripLeadingEcho(answer, String(last.content));
            // The next turn's prefix is this history plus the answer as the client received it. A
            // failure here costs only continuity (the next turn starts a session with a transcript).
            await agent.setTitle(session.id, conversationTitle(clientKey, [...body.messages, { role: "assistant", content: answer }]), ctl.signal)
                .catch((e) => {
                    if (ctl.signal.aborted) throw e;
                    log(`session ${session.id}: the conversation key was not stored: ${(e as Error).message}`);
                });
            clearTimeout(timer);
            if (keepAlive) clearInterval(keepAlive);
            const usage = result.info?.tokens;

            if (!body.stream) return send(res, 200, completion(id, name, answer, usage));
            for (const [i, piece] of pieces(answer, s.chunkSize).entries()) {
                if (res.destroyed) return;
                if (i > 0 && s.chunkDelayMs > 0) await sleep(s.chunkDelayMs);
                res.write(`data: ${JSON.stringify(chunk(id, name, { content: piece }))}\n\n`);
            }
            if (res.destroyed) return;
            res.write(`data: ${JSON.stringify(chunk(id, name, {}, "stop"))}\n\n`);
            res.end("data: [DONE]\n\n");
        } catch (e) {
            clearTimeout(timer);
            if (keepAlive) clearInterval(keepAlive);
            const aborted = ctl.signal.aborted;
            if (aborted && sessionId) {
                await agent.abort(sessionId).then(
                    () => log(`session ${sessionId} aborted (${e instanceof AgentError ? e.kind : "error"})`),
                    (err) => log(`session ${sessionId}: abort failed: ${(err as Error).message}`),
                );
            }
            if (e instanceof AgentError && e.kind === "aborted") return;
            const f = upstreamFailure(e);
            if (f.status >= 500) log(`chat ${id}: ${f.status} ${(e as Error).message}`);
            if (!res.headersSent) return send(res, f.status, f.body);
            if (!res.destroyed) {
                res.write(`data: ${JSON.stringify(f.body)}\n\n`);
                res.end("data: [DONE]\n\n");
            }
        } finally {
            res.off("close", onClose);
        }
    }

    async function handle(req: http.IncomingMessage, res: http.ServerResponse) {
        const path = (req.url ?? "/").split("?")[0];
        const method = req.method ?? "GET";
        if (path === "/health") return method === "GET" || method === "HEAD" ? send(res, 200, { status: "ok" }) : send(res, 405, errorBody("method not allowed", "invalid_request_error"));
        if (path === "/ready") {
            try {
                const ok = await agent.healthy(AbortSignal.timeout(5000));
                return send(res, ok ? 200 : 503, { status: ok ? "ready" : "agent server unhealthy" });
            } catch (e) {
                return send(res, 503, { status: `agent server: ${(e as Error).message}` });
            }
        }
        if (!path.startsWith("/v1/")) return send(res, 404, errorBody(`no route ${path}`, "invalid_request_error", "not_found"));
        const clientKey = keys.check(req.headers.authorization);
        if (!clientKey) {
            res.setHeader("WWW-Authenticate", "Bearer");
            return send(res, 401, errorBody("Incorrect API key provided. Send Authorization: Bearer <key>.", "invalid_request_error", "invalid_api_key"));
        }
        const modelObject = { id: modelId, object: "model", created: 0, owned_by: providerID };
        if (path === "/v1/models") return method === "GET" ? send(res, 200, { object: "list", data: [modelObject] }) : send(res, 405, errorBody("method not allowed", "invalid_request_error"));
        if (path.startsWith("/v1/models/")) {
            const wanted = decodeURIComponent(path.slice("/v1/models/".length));
            return wanted === modelId ? send(res, 200, modelObject) : send(res, 404, errorBody(`The model \`${wanted}\` does not exist`, "invalid_request_error", "model_not_found"));
        }
        if (path === "/v1/chat/completions") {
            if (method !== "POST") return send(res, 405, errorBody("method not allowed", "invalid_request_error"));
            return chat(req, res, clientKey);
        }
        return send(res, 404, errorBody(`no route ${path}`, "invalid_request_error", "not_found"));
    }

    const server = http.createServer((req, res) => {
        const started = Date.now();
        res.on("finish", () => {
            if (req.url !== "/health") log(`${req.method} ${(req.url ?? "").split("?")[0]} ${res.statusCode} ${Date.now() - started}ms`);
        });
        handle(req, res).catch((e) => {
            const f = upstreamFailure(e);
            if (f.status >= 500) log(`${req.method} ${req.url}: ${(e as Error).stack ?? e}`);
            if (!res.headersSent) send(res, f.status, f.body);
            else res.destroy();
        });
    });
    server.keepAliveTimeout = 65_000;
    server.requestTimeout = 0; // a long model turn is bounded by the upstream time-out instead

    return {
        server,
        agent,
        async shutdown(graceMs: number) {
            const closed = new Promise<void>((resolve) => server.close(() => resolve()));
            server.closeIdleConnections();
            await Promise.race([closed, sleep(graceMs)]);
            server.closeAllConnections();
            agent.close();
        },
    };
}

const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
