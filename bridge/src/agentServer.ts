/**
 * The agent server (opencode `serve`) as the bridge uses it: every request carries the basic
 * authentication of the agent server's Secret. Plain node:http, so a long model turn is bounded
 * only by the bridge's own time-out (fetch's client would cut it at its header time-out).
 *
 * opencode's routes used (1.2.27, read in its server source: src/server/routes/session.ts,
 * experimental.ts, permission.ts, question.ts and server.ts):
 *   GET  /global/health                     readiness
 *   GET  /agent                             the agents (readiness: the chat agent exists)
 *   GET  /event                             the instance's event stream (server-sent events)
 *   GET  /session?search=&limit=            sessions whose title contains a string (SQL LIKE)
 *   GET  /experimental/session?search=&cursor=&limit=   the same, updated before `cursor`
 *   GET  /session/status                    sessions that are working
 *   POST /session {title}                   a new session (a non-default title also spares the title-model call)
 *   PATCH /session/:id {title}              the conversation key after a turn
 *   DELETE /session/:id                     a session and its messages
 *   POST /session/:id/message {model, agent, system?, format?, parts}  one prompt; answers when the turn is over
 *   DELETE /session/:id/message/:messageID  one message (refused while the session works)
 *   POST /session/:id/abort                 stops the session's work
 *   POST /permission/:id/reply {reply}      answers a permission request
 *   POST /question/:id/reject               rejects a question
 */
import * as http from "node:http";
import * as https from "node:https";

export interface AgentResponse {
    status: number;
    body: string;
}

export class AgentError extends Error {
    constructor(message: string, readonly kind: "unreachable" | "timeout" | "aborted" | "status", readonly status?: number) {
        super(message);
    }
}

export interface Session {
    id: string;
    title: string;
    time: { created: number; updated: number };
}

export interface AssistantInfo {
    id: string;
    role: string;
    error?: { name?: string; data?: { message?: string; statusCode?: number; responseBody?: string } };
    tokens?: { input?: number; output?: number; reasoning?: number; cache?: { read?: number; write?: number } };
    structured?: unknown;
}

export interface PromptResult {
    info: AssistantInfo;
    parts: { type: string; text?: string; synthetic?: boolean; ignored?: boolean }[];
}

export interface PromptBody {
    model: { providerID: string; modelID: string };
    agent: string;
    system?: string;
    format?: { type: "json_schema"; schema: Record<string, unknown> };
    parts: { type: "text"; text: string }[];
}

/** One event of opencode's bus: {type, properties}. */
export interface AgentEvent {
    type: string;
    properties: any;
}

/** The session an event is about, if any. */
export function eventSession(e: AgentEvent): string | undefined {
    const p = e.properties ?? {};
    return p.sessionID ?? p.info?.sessionID ?? p.part?.sessionID ?? (e.type.startsWith("session.") ? p.info?.id : undefined);
}

export class AgentServer {
    private readonly auth: string;
    private readonly agent: http.Agent;
    private readonly mod: typeof http | typeof https;
    private readonly listeners = new Map<string, Set<(e: AgentEvent) => void>>();
    private readonly anyListeners = new Set<(e: AgentEvent) => void>();
    private events?: { req: http.ClientRequest; connected: Promise<void> };
    private closed = false;

    constructor(private readonly base: string, username: string, password: string, private readonly log: (line: string) => void = () => {}) {
        this.auth = `Basic ${Buffer.from(`${username}:${password}`).toString("base64")}`;
        this.mod = base.startsWith("https:") ? https : http;
        this.agent = new this.mod.Agent({ keepAlive: true, maxSockets: 64 });
    }

    request(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<AgentResponse> {
        const url = new URL(path, this.base);
        const payload = body === undefined ? undefined : Buffer.from(JSON.stringify(body));
        return new Promise((resolve, reject) => {
            if (signal?.aborted) return reject(abortError(signal));
            const req = this.mod.request(url, {
                method,
                agent: this.agent,
                headers: {
                    Authorization: this.auth,
                    Accept: "application/json",
                    ...(payload ? { "Content-Type": "application/json", "Content-Length": payload.length } : {}),
                },
            }, (res) => {
                const chunks: Buffer[] = [];
                res.on("data", (c: Buffer) => chunks.push(c));
                res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }));
                res.on("error", (e) => reject(new AgentError(`the agent server's response broke off: ${e.message}`, "unreachable")));
            });
            const onAbort = () => req.destroy(abortError(signal!));
            signal?.addEventListener("abort", onAbort, { once: true });
            req.on("close", () => signal?.removeEventListener("abort", onAbort));
            req.on("error", (e) => reject(e instanceof AgentError ? e : new AgentError(`the agent server is unreachable: ${e.message}`, "unreachable")));
            req.end(payload);
        });
    }

    private async json<T>(method: string, path: string, body?: unknown, signal?: AbortSignal): Promise<T> {
        const res = await this.request(method, path, body, signal);
        const route = `${method} ${path.split("?")[0]}`;
        if (res.status === 401) throw new AgentError("the agent server refused the bridge's credentials (401)", "status", 401);
        if (res.status < 200 || res.status > 299) throw new AgentError(`the agent server answered ${route} with ${res.status}: ${res.body.slice(0, 300)}`, "status", res.status);
        try {
            return JSON.parse(res.body) as T;
        } catch {
            throw new AgentError(`the agent server answered ${route} with no JSON: ${res.body.slice(0, 100)}`, "status", res.status);
        }
    }

    async healthy(signal?: AbortSignal): Promise<boolean> {
        const h = await this.json<{ healthy?: boolean }>("GET", "/global/health", undefined, signal);
        return h.healthy === true;
    }

    async agentNames(signal?: AbortSignal): Promise<string[]> {
        return (await this.json<{ name: string }[]>("GET", "/agent", undefined, signal)).map((a) => a.name);
    }

    searchSessions(text: string, signal?: AbortSignal): Promise<Session[]> {
        return this.json<Session[]>("GET", `/session?search=${encodeURIComponent(text)}&limit=1000`, undefined, signal);
    }

    /** Sessions whose title contains `text`, updated before `before` (epoch ms), at most `limit`. */
    idleSessions(text: string, before: number, limit: number, signal?: AbortSignal): Promise<Session[]> {
        return this.json<Session[]>("GET", `/experimental/session?search=${encodeURIComponent(text)}&cursor=${before}&limit=${limit}&archived=true`, undefined, signal);
    }

    workingSessions(signal?: AbortSignal): Promise<Record<string, { type: string }>> {
        return this.json("GET", "/session/status", undefined, signal);
    }

    createSession(title: string, signal?: AbortSignal): Promise<Session> {
        return this.json<Session>("POST", "/session", { title }, signal);
    }

    setTitle(id: string, title: string, signal?: AbortSignal): Promise<Session> {
        return this.json<Session>("PATCH", `/session/${encodeURIComponent(id)}`, { title }, signal);
    }

    /** Deletes a session; one already gone counts as deleted. */
    async deleteSession(id: string, signal?: AbortSignal): Promise<void> {
        const res = await this.request("DELETE", `/session/${encodeURIComponent(id)}`, undefined, signal ?? AbortSignal.timeout(10_000));
        if (res.status !== 404 && (res.status < 200 || res.status > 299)) throw new AgentError(`the agent server answered DELETE /session/:id with ${res.status}: ${res.body.slice(0, 200)}`, "status", res.status);
    }

    async deleteMessage(id: string, messageID: string): Promise<void> {
        const res = await this.request("DELETE", `/session/${encodeURIComponent(id)}/message/${encodeURIComponent(messageID)}`, undefined, AbortSignal.timeout(10_000));
        if (res.status !== 404 && (res.status < 200 || res.status > 299)) throw new AgentError(`the agent server answered DELETE /session/:id/message/:id with ${res.status}: ${res.body.slice(0, 200)}`, "status", res.status);
    }

    /** One prompt; opencode assigns the message IDs (a client-made ID can sort after opencode's and keep its loop going). */
    prompt(id: string, body: PromptBody, signal?: AbortSignal): Promise<PromptResult> {
        return this.json<PromptResult>("POST", `/session/${encodeURIComponent(id)}/message`, body, signal);
    }

    async abort(id: string): Promise<void> {
        await this.json<unknown>("POST", `/session/${encodeURIComponent(id)}/abort`, {}, AbortSignal.timeout(10_000));
    }

    async rejectPermission(requestID: string): Promise<void> {
        await this.json<unknown>("POST", `/permission/${encodeURIComponent(requestID)}/reply`, { reply: "reject", message: "Nobody can answer through the model bridge; continue without it." }, AbortSignal.timeout(10_000));
    }

    async rejectQuestion(requestID: string): Promise<void> {
        await this.json<unknown>("POST", `/question/${encodeURIComponent(requestID)}/reject`, {}, AbortSignal.timeout(10_000));
    }

    /** Calls `fn` with every event about session `id` until the returned function is called. */
    watch(id: string, fn: (e: AgentEvent) => void): () => void {
        let set = this.listeners.get(id);
        if (!set) this.listeners.set(id, (set = new Set()));
        set.add(fn);
        return () => {
            set!.delete(fn);
            if (set!.size === 0) this.listeners.delete(id);
        };
    }

    /** Calls `fn` with every event until the returned function is called. */
    watchAll(fn: (e: AgentEvent) => void): () => void {
        this.anyListeners.add(fn);
        return () => this.anyListeners.delete(fn);
    }

    get eventsConnected(): boolean {
        return this.connectedNow;
    }
    private connectedNow = false;

    /**
     * The event stream, connected: one GET /event per bridge process, shared by every chat; it is
     * opened again when it ends. Resolves when opencode's `server.connected` event has arrived (so a
     * prompt sent after it cannot miss its own events).
     */
    connectEvents(signal?: AbortSignal): Promise<void> {
        if (this.closed) return Promise.reject(new AgentError("the bridge is closing", "aborted"));
        if (!this.events) this.events = this.openEvents();
        const connected = this.events.connected;
        if (!signal) return connected;
        return new Promise((resolve, reject) => {
            const onAbort = () => reject(abortError(signal));
            if (signal.aborted) return onAbort();
            signal.addEventListener("abort", onAbort, { once: true });
            connected.then(resolve, reject).finally(() => signal.removeEventListener("abort", onAbort));
        });
    }

    private openEvents(): { req: http.ClientRequest; connected: Promise<void> } {
        let settle!: { resolve: () => void; reject: (e: Error) => void };
        const connected = new Promise<void>((resolve, reject) => (settle = { resolve, reject }));
        connected.catch(() => {});
        const again = (why: string) => {
            const was = this.connectedNow;
            this.connectedNow = false;
            this.events = undefined;
            settle.reject(new AgentError(`the agent server's event stream: ${why}`, "unreachable"));
            if (was && !this.closed) this.log(`model bridge: the agent server's event stream ended (${why}); opening it again`);
            // Chats waiting on it see the end: each fails over to its own time-out or answer.
            for (const set of this.listeners.values()) for (const fn of set) fn({ type: "bridge.events-lost", properties: {} });
            if (!this.closed && this.listeners.size > 0) setTimeout(() => { if (!this.events && !this.closed) this.events = this.openEvents(); }, 500).unref();
        };
        const req = this.mod.request(new URL("/event", this.base), { method: "GET", agent: false, headers: { Authorization: this.auth, Accept: "text/event-stream" } }, (res) => {
            if (res.statusCode !== 200) {
                res.resume();
                return again(res.statusCode === 401 ? "the agent server refused the bridge's credentials (401)" : `HTTP ${res.statusCode}`);
            }
            res.setEncoding("utf8");
            res.on("data", eventBlocks((block) => {
                const e = parseEvent(block, (id) => this.listeners.has(id));
                if (e === undefined) return;
                if (e.type === "server.connected") {
                    this.connectedNow = true;
                    settle.resolve();
                }
                this.dispatch(e);
            }));
            res.on("end", () => again("closed by the agent server"));
            res.on("error", (e) => again(e.message));
        });
        req.on("error", (e) => again(e.message));
        req.end();
        return { req, connected };
    }

    private dispatch(e: AgentEvent) {
        for (const fn of this.anyListeners) fn(e);
        const id = eventSession(e);
        if (!id) return;
        for (const fn of this.listeners.get(id) ?? []) fn(e);
    }

    close() {
        this.closed = true;
        this.events?.req.destroy();
        this.agent.destroy();
    }
}

/**
 * A reader of an event stream's text as it arrives, calling `emit` with each event's block (its
 * lines before the blank line). An event is held as the chunks it came in until its blank line: a
 * large one (a long prompt's part) is joined once, not copied again with every chunk.
 */
function eventBlocks(emit: (block: string) => void): (chunk: string) => void {
    let held: string[] = [];
    let endsWithNewline = false;
    return (s: string) => {
        let rest = s;
        for (;;) {
            let i: number;
            if (endsWithNewline && rest.startsWith("\n")) {
                const block = held.join("");
                held = [];
                emit(block.slice(0, -1));
                rest = rest.slice(1);
                endsWithNewline = false;
                continue;
            }
            if ((i = rest.indexOf("\n\n")) < 0) break;
            const block = held.length ? held.join("") + rest.slice(0, i) : rest.slice(0, i);
            held = [];
            endsWithNewline = false;
            emit(block);
            rest = rest.slice(i + 2);
        }
        if (rest) {
            held.push(rest);
            endsWithNewline = rest.endsWith("\n");
        }
    };
}

/** The event of a block (its data lines' JSON), or undefined: none, not JSON, or large and of a session not `watched`. */
function parseEvent(block: string, watched: (session: string) => boolean): AgentEvent | undefined {
    // A large event of a session no chat here watches (another replica's long prompt) is not parsed.
    if (block.length > 65_536) {
        const id = /"sessionID":"([^"]+)"/.exec(block.slice(0, 4096))?.[1];
        if (id && !watched(id)) return undefined;
    }
    const data = block.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).replace(/^ /, "")).join("\n");
    if (!data) return undefined;
    try {
        return JSON.parse(data);
    } catch {
        return undefined;
    }
}

function abortError(signal: AbortSignal): AgentError {
    const reason = signal.reason as { name?: string } | undefined;
    if (reason?.name === "TimeoutError") return new AgentError("the agent server did not answer in time", "timeout");
    if (reason instanceof AgentError) return reason;
    return new AgentError("the client went away", "aborted");
}
