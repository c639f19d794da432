/**
 * The bridge's HTTP server: an OpenAI-compatible API under /v1 in front of one agent server, plus
 * /health (liveness: the process answers) and /ready (readiness: the agent server answers with the
 * bridge's credentials, its event stream is open and the chat agent exists). Nothing else is served.
 *
 * Every /v1 route answers 401 without a valid client key; POST /v1/chat/completions is a chat
 * (chat.ts), GET /v1/models and /v1/models/<id> name the one model. A request's failure is answered
 * as httpFailure.ts says. A shutdown refuses new chats (503), lets the running ones finish, aborts
 * what outlives its grace and waits for the work the chats left behind (a conversation lock's
 * release) before it closes; the idle sweep (idleSweep.ts) stops with it.
 */
import * as http from "node:http";
import { AgentServer } from "./agentServer";
import { BodyBudget } from "./bodyBudget";
import { chat, type ActiveChat, type ChatContext } from "./chat";
import { ClientKeys } from "./clientKeys";
import { httpFailure, ShuttingDown } from "./httpFailure";
import { errorBody, RequestError } from "./openai";
import { sendJson } from "./responses";
import type { Settings } from "./settings";
import { startSweeper, sweepIdleSessions } from "./idleSweep";

export interface Bridge {
    server: http.Server;
    agent: AgentServer;
    /** Stops taking chats, lets running ones finish (at most `graceMs`), aborts the rest in the agent server, closes. */
    shutdown(graceMs: number): Promise<void>;
    /** Deletes the bridge's sessions idle longer than BRIDGE_SESSION_IDLE_MS; how many. */
    sweep(): Promise<number>;
}

/** What the routes use: a chat's context and the client keys. */
interface ServerContext extends ChatContext {
    keys: ClientKeys;
}

export function createBridge(s: Settings, log: (line: string) => void = (l) => console.log(l)): Bridge {
    const agent = new AgentServer(s.agentBase, s.agentUsername, s.agentPassword, log);
    const keys = new ClientKeys(s.apiKeysFile, log);
    const slash = s.defaultModel.indexOf("/");
    const model = { providerID: s.defaultModel.slice(0, slash), modelID: s.defaultModel.slice(slash + 1) };
    const leaseMs = s.upstreamTimeoutMs + 60_000;
    const background = new Set<Promise<unknown>>();
    let draining = false;
    const later = (p: Promise<unknown>) => {
        const q = p.catch(() => {}).finally(() => background.delete(q));
        background.add(q);
    };
    const c: ServerContext = { settings: s, agent, log, model, leaseMs, keys, bodies: new BodyBudget(s.requestMemoryBytes), active: new Set(), draining: () => draining, later };
    const server = serve(c);
    const sweep = () => sweepIdleSessions(agent, s, leaseMs, log);
    const sweeper = startSweeper(s, sweep, () => draining, log);
    return {
        server,
        agent,
        sweep,
        async shutdown(graceMs: number) {
            draining = true;
            if (sweeper) clearInterval(sweeper);
            await close(server, c.active, background, graceMs, log);
            agent.close();
        },
    };
}

/** The HTTP server: each request routed, its failure answered, and (but for /health and /ready) logged with its status and time. */
function serve(c: ServerContext): http.Server {
    const server = http.createServer((req, res) => {
        const started = Date.now();
        res.on("finish", () => {
            if (req.url !== "/health" && req.url !== "/ready") c.log(`${req.method} ${(req.url ?? "").split("?")[0].slice(0, 200)} ${res.statusCode} ${Date.now() - started}ms`);
        });
        handle(c, req, res).catch((e) => {
            const f = httpFailure(e, c.settings.upstreamTimeoutMs);
            if (f.status >= 500 && !(e instanceof RequestError) && !(e instanceof ShuttingDown)) c.log(`${req.method} ${(req.url ?? "").slice(0, 200)}: ${(e as Error).stack ?? e}`);
            if (!res.headersSent) sendJson(res, f.status, f.body, c.draining(), f.headers);
            else res.destroy();
        });
    });
    server.keepAliveTimeout = 65_000;
    server.requestTimeout = 0; // a long model turn is bounded by the upstream time-out instead
    return server;
}

async function handle(c: ServerContext, req: http.IncomingMessage, res: http.ServerResponse) {
    const send = (status: number, body: unknown) => sendJson(res, status, body, c.draining());
    const path = (req.url ?? "/").split("?")[0];
    const method = req.method ?? "GET";
    if (path === "/health") return method === "GET" || method === "HEAD" ? send(200, { status: "ok" }) : send(405, errorBody("method not allowed", "invalid_request_error"));
    if (path === "/ready") {
        const r = await ready(c);
        return send(r.ok ? 200 : 503, { status: r.status });
    }
    if (!path.startsWith("/v1/")) return send(404, errorBody("no such route", "invalid_request_error", "not_found"));
    const clientKey = c.keys.check(req.headers.authorization);
    if (!clientKey) {
        res.setHeader("WWW-Authenticate", "Bearer");
        return send(401, errorBody("Incorrect API key provided. Send Authorization: Bearer <key>.", "invalid_request_error", "invalid_api_key"));
    }
    const modelId = c.settings.defaultModel;
    const modelObject = { id: modelId, object: "model", created: 0, owned_by: c.model.providerID };
    if (path === "/v1/models") return method === "GET" ? send(200, { object: "list", data: [modelObject] }) : send(405, errorBody("method not allowed", "invalid_request_error"));
    if (path.startsWith("/v1/models/")) {
        const raw = path.slice("/v1/models/".length);
        let wanted: string | undefined;
        try {
            wanted = decodeURIComponent(raw);
        } catch {
            wanted = undefined;
        }
        if (wanted === modelId) return send(200, modelObject);
        return send(404, errorBody(wanted === undefined ? "The model id is not valid percent-encoding" : `The model \`${wanted}\` does not exist`, "invalid_request_error", "model_not_found"));
    }
    if (path === "/v1/chat/completions") {
        if (method !== "POST") return send(405, errorBody("method not allowed", "invalid_request_error"));
        return chat(c, req, res, clientKey);
    }
    return send(404, errorBody("no such route", "invalid_request_error", "not_found"));
}

async function ready(c: ServerContext): Promise<{ ok: boolean; status: string }> {
    if (c.draining()) return { ok: false, status: "shutting down" };
    try {
        const signal = AbortSignal.timeout(5000);
        if (!(await c.agent.healthy(signal))) return { ok: false, status: "agent server unhealthy" };
        await c.agent.connectEvents(signal);
        if (!(await c.agent.agentNames(signal)).includes(c.settings.agent)) return { ok: false, status: `the agent server has no agent ${c.settings.agent} (BRIDGE_AGENT)` };
        return { ok: true, status: "ready" };
    } catch (e) {
        return { ok: false, status: `agent server: ${(e as Error).message}` };
    }
}

/** The server closed: the running chats given `graceMs` to finish, the rest aborted, the background work waited for (5 s at most). */
async function close(server: http.Server, active: Set<ActiveChat>, background: Set<Promise<unknown>>, graceMs: number, log: (line: string) => void) {
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
}
