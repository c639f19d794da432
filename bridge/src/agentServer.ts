/**
 * The agent server (opencode `serve`) as the bridge uses it: every request carries the basic
 * authentication of the agent server's Secret. Plain node:http, so a long model turn is bounded
 * only by the bridge's own time-out (fetch's client would cut it at its header time-out).
 *
 * opencode's routes used (1.2.27, the @opencode-ai/sdk of that version):
 *   GET  /global/health                    readiness
 *   GET  /session?search=&limit=           sessions whose title contains a string
 *   POST /session {title}                  a new session (a non-default title also spares the title-model call)
 *   PATCH /session/:id {title}             the conversation key after a turn
 *   POST /session/:id/message {model, system?, parts}  one prompt; answers when the turn is over
 *   POST /session/:id/abort                stops the session's work
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
}

export interface PromptResult {
    info: { id: string; error?: { name?: string; data?: { message?: string } }; tokens?: { input?: number; output?: number } };
    parts: { type: string; text?: string; synthetic?: boolean; ignored?: boolean }[];
}

export class AgentServer {
    private readonly auth: string;
    private readonly agent: http.Agent;
    private readonly mod: typeof http | typeof https;

    constructor(private readonly base: string, username: string, password: string) {
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
        if (res.status === 401) throw new AgentError("the agent server refused the bridge's credentials (401)", "status", 401);
        if (res.status < 200 || res.status > 299) throw new AgentError(`the agent server answered ${method} ${path.split("?")[0]} with ${res.status}: ${res.body.slice(0, 300)}`, "status", res.status);
        try {
            return JSON.parse(res.body) as T;
        } catch {
            throw new AgentError(`the agent server answered ${method} ${path.split("?")[0]} with no JSON: ${res.body.slice(0, 100)}`, "status", res.status);
        }
    }

    async healthy(signal?: AbortSignal): Promise<boolean> {
        const h = await this.json<{ healthy?: boolean }>("GET", "/global/health", undefined, signal);
        return h.healthy === true;
    }

    async findSessionByTitle(title: string, signal?: AbortSignal): Promise<Session | undefined> {
        const list = await this.json<Session[]>("GET", `/session?search=${encodeURIComponent(title)}&limit=10`, undefined, signal);
        return list.find((s) => s.title === title);
    }

    createSession(title: string, signal?: AbortSignal): Promise<Session> {
        return this.json<Session>("POST", "/session", { title }, signal);
    }

    setTitle(id: string, title: string, signal?: AbortSignal): Promise<Session> {
        return this.json<Session>("PATCH", `/session/${encodeURIComponent(id)}`, { title }, signal);
    }

    /** One prompt; opencode assigns the message IDs (a client-made ID can sort after opencode's and keep its loop going). */
    prompt(id: string, body: { model: { providerID: string; modelID: string }; system?: string; parts: { type: "text"; text: string }[] }, signal?: AbortSignal): Promise<PromptResult> {
        return this.json<PromptResult>("POST", `/session/${encodeURIComponent(id)}/message`, body, signal);
    }

    async abort(id: string): Promise<void> {
        await this.json<unknown>("POST", `/session/${encodeURIComponent(id)}/abort`, {}, AbortSignal.timeout(10_000));
    }

    close() {
        this.agent.destroy();
    }
}

function abortError(signal: AbortSignal): AgentError {
    const reason = signal.reason as { name?: string } | undefined;
    return reason?.name === "TimeoutError" ? new AgentError("the agent server did not answer in time", "timeout") : new AgentError("the client went away", "aborted");
}
