/**
 * A stand-in for the opencode routes the bridge uses (unit tests only), recording what it is sent.
 * It keeps sessions with their titles, creation times and messages, and answers a prompt as opencode
 * 1.2.27 does on its event stream (GET /event): message.updated for the user message, then for the
 * assistant message, message.part.updated when a text part starts, message.part.delta for each
 * piece, message.part.updated with time.end, then the POST's answer. A reply may instead put the
 * session in opencode's retry state (session.status retry) until it is aborted.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface Reply {
    /** The assistant's text, sent in `pieces` deltas `gapMs` apart (default: one piece). */
    text?: string;
    pieces?: number;
    gapMs?: number;
    /** Waits this long before the first piece. */
    delayMs?: number;
    error?: { name: string; data: { message: string; statusCode?: number } };
    /** opencode's retry status (attempt 1) instead of an answer; the turn then waits for its abort. */
    retry?: { message: string; inMs: number };
    /** Asks a permission first (the bridge should reject it). */
    ask?: boolean;
    structured?: unknown;
}

interface FakeSession {
    title: string;
    created: number;
    updated: number;
    prompts: any[];
    messages: { id: string; role: string }[];
    busy: boolean;
    abort?: () => void;
}

export interface FakeAgent {
    url: string;
    auth: string;
    sessions: Map<string, FakeSession>;
    aborted: string[];
    deletedMessages: string[];
    rejected: string[];
    requests: { method: string; path: string; authorization?: string }[];
    /** PATCH /session/:id answers 500. */
    failTitle: boolean;
    /** DELETE /session/:id answers after this long. */
    deleteDelayMs: number;
    agents: string[];
    reply: (text: string) => Reply;
    /** Sends an event to every /event listener. */
    publish(type: string, properties: unknown): void;
    close(): Promise<void>;
}

export async function startFakeAgent(): Promise<FakeAgent> {
    const auth = `Basic ${Buffer.from("agent:secret-password").toString("base64")}`;
    let n = 0;
    let clock = 1_000_000;
    const id = (p: string) => `${p}_${String(++n).padStart(6, "0")}`;
    const streams = new Set<http.ServerResponse>();
    const fake: FakeAgent = {
        url: "",
        auth,
        sessions: new Map(),
        aborted: [],
        deletedMessages: [],
        rejected: [],
        requests: [],
        failTitle: false,
        deleteDelayMs: 0,
        agents: ["build", "plan", "bridge"],
        reply: (text) => ({ text: `answer to ${text}` }),
        publish: (type, properties) => {
            for (const s of streams) s.write(`data: ${JSON.stringify({ type, properties })}\n\n`);
        },
        close: async () => {},
    };
    const info = (sid: string) => {
        const s = fake.sessions.get(sid)!;
        return { id: sid, title: s.title, time: { created: s.created, updated: s.updated } };
    };
    const server = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        const body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : undefined;
        const url = new URL(req.url!, "http://x");
        fake.requests.push({ method: req.method!, path: url.pathname, authorization: req.headers.authorization });
        const json = (status: number, v: unknown) => {
            res.writeHead(status, { "Content-Type": "application/json" });
            res.end(JSON.stringify(v));
        };
        if (req.headers.authorization !== auth) return json(401, { error: "Unauthorized" });
        const m = /^\/session\/([^/]+)(\/message|\/abort)?(?:\/([^/]+))?$/.exec(url.pathname);
        if (url.pathname === "/global/health") return json(200, { healthy: true, version: "fake" });
        if (url.pathname === "/agent") return json(200, fake.agents.map((name) => ({ name })));
        if (url.pathname === "/event") {
            res.writeHead(200, { "Content-Type": "text/event-stream" });
            res.write(`data: ${JSON.stringify({ type: "server.connected", properties: {} })}\n\n`);
            streams.add(res);
            res.on("close", () => streams.delete(res));
            return;
        }
        if (url.pathname === "/session/status") return json(200, Object.fromEntries([...fake.sessions.entries()].filter(([, s]) => s.busy).map(([sid]) => [sid, { type: "busy" }])));
        if ((url.pathname === "/session" || url.pathname === "/experimental/session") && req.method === "GET") {
            const q = (url.searchParams.get("search") ?? "").toLowerCase();
            const cursor = url.searchParams.get("cursor");
            const list = [...fake.sessions.keys()].map(info).filter((s) => s.title.toLowerCase().includes(q) && (!cursor || s.time.updated < Number(cursor)));
            return json(200, list.sort((a, b) => b.time.updated - a.time.updated));
        }
        if (url.pathname.startsWith("/permission/") || url.pathname.startsWith("/question/")) {
            fake.rejected.push(url.pathname);
            return json(200, true);
        }
        if (url.pathname === "/session" && req.method === "POST") {
            const sid = id("ses");
            const now = (clock += 10);
            fake.sessions.set(sid, { title: body.title, created: now, updated: now, prompts: [], messages: [], busy: false });
            return json(200, info(sid));
        }
        const s = m ? fake.sessions.get(m[1]) : undefined;
        if (m && !s) return json(404, { name: "NotFoundError" });
        if (m && s && !m[2] && req.method === "PATCH") {
            if (fake.failTitle) return json(500, { error: "title store failed" });
            s.title = body.title;
            s.updated = clock += 10;
            return json(200, info(m[1]));
        }
        if (m && s && !m[2] && req.method === "DELETE") {
            if (fake.deleteDelayMs) await new Promise((ok) => setTimeout(ok, fake.deleteDelayMs));
            const was = info(m[1]);
            fake.sessions.delete(m[1]);
            fake.publish("session.deleted", { info: was });
            return json(200, true);
        }
        if (m && s && m[2] === "/abort") {
            fake.aborted.push(m[1]);
            s.abort?.();
            return json(200, true);
        }
        if (m && s && m[2] === "/message" && m[3] && req.method === "DELETE") {
            if (s.busy) return json(400, { name: "BusyError" });
            s.messages = s.messages.filter((x) => x.id !== m[3]);
            fake.deletedMessages.push(m[3]);
            return json(200, true);
        }
        if (m && s && m[2] === "/message" && req.method === "POST") {
            const sid = m[1];
            s.prompts.push(body);
            s.busy = true;
            s.updated = clock += 10;
            const userMsg = { id: id("msg"), role: "user" };
            const asst = { id: id("msg"), role: "assistant" };
            s.messages.push(userMsg, asst);
            fake.publish("message.updated", { info: { ...userMsg, sessionID: sid } });
            fake.publish("message.updated", { info: { ...asst, sessionID: sid } });
            const r = fake.reply(body.parts[0].text);
            let aborted = false;
            const abortedP = new Promise<void>((ok) => (s.abort = () => { aborted = true; ok(); }));
            const wait = (ms: number) => Promise.race([new Promise((ok) => setTimeout(ok, ms)), abortedP]);
            const done = (v: unknown) => {
                s.busy = false;
                json(200, v);
            };
            if (r.ask) fake.publish("permission.asked", { id: "per_1", sessionID: sid, permission: "bash" });
            if (r.retry) {
                fake.publish("session.status", { sessionID: sid, status: { type: "retry", attempt: 1, message: r.retry.message, next: Date.now() + r.retry.inMs } });
                await abortedP;
                return done({ info: { ...asst, error: { name: "MessageAbortedError", data: { message: "Aborted" } } }, parts: [] });
            }
            if (r.delayMs) await wait(r.delayMs);
            const partID = id("prt");
            const text = r.text ?? "";
            if (!aborted && r.text !== undefined) {
                fake.publish("message.part.updated", { part: { id: partID, sessionID: sid, messageID: asst.id, type: "text", text: "" } });
                const k = r.pieces ?? 1;
                const size = Math.ceil(text.length / k) || 1;
                for (let i = 0; i < text.length && !aborted; i += size) {
                    fake.publish("message.part.delta", { sessionID: sid, messageID: asst.id, partID, field: "text", delta: text.slice(i, i + size) });
                    if (r.gapMs) await wait(r.gapMs);
                }
                fake.publish("message.part.updated", { part: { id: partID, sessionID: sid, messageID: asst.id, type: "text", text: text.trimEnd(), time: { start: 1, end: 2 } } });
            }
            if (aborted) return done({ info: { ...asst, error: { name: "MessageAbortedError", data: { message: "Aborted" } } }, parts: [] });
            return done({
                info: { ...asst, error: r.error, tokens: { input: 3, output: 5, reasoning: 0, cache: { read: 0, write: 0 } }, structured: r.structured },
                parts: [{ type: "step-start" }, ...(r.text !== undefined ? [{ type: "text", text: text.trimEnd() }] : []), { type: "step-finish" }],
            });
        }
        json(404, { error: "not found" });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    fake.close = () => new Promise((ok) => { for (const s of streams) s.destroy(); server.closeAllConnections(); server.close(() => ok()); });
    return fake;
}
