/** A stand-in for opencode's server routes the bridge uses, recording what it is sent (unit tests only). */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export interface FakeAgent {
    url: string;
    auth: string;
    sessions: Map<string, { title: string; prompts: any[] }>;
    aborted: string[];
    requests: { method: string; path: string; authorization?: string }[];
    /** PATCH /session/:id answers 500. */
    failTitle: boolean;
    /** What a prompt answers (default: "answer to <text>" after `delayMs`). */
    reply: (text: string) => { text?: string; error?: { name: string; data: { message: string } }; delayMs?: number };
    close(): Promise<void>;
}

export async function startFakeAgent(): Promise<FakeAgent> {
    const auth = `Basic ${Buffer.from("agent:secret-password").toString("base64")}`;
    let n = 0;
    const fake: FakeAgent = {
        url: "",
        auth,
        sessions: new Map(),
        aborted: [],
        requests: [],
        failTitle: false,
        reply: (text) => ({ text: `answer to ${text}` }),
        close: async () => {},
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
        const m = /^\/session\/([^/]+)(\/message|\/abort)?$/.exec(url.pathname);
        if (url.pathname === "/global/health") return json(200, { healthy: true, version: "fake" });
        if (url.pathname === "/session" && req.method === "GET") {
            const q = url.searchParams.get("search") ?? "";
            return json(200, [...fake.sessions.entries()].filter(([, s]) => s.title.includes(q)).map(([id, s]) => ({ id, title: s.title })));
        }
        if (url.pathname === "/session" && req.method === "POST") {
            const id = `ses_${++n}`;
            fake.sessions.set(id, { title: body.title, prompts: [] });
            return json(200, { id, title: body.title });
        }
        if (m && !m[2] && req.method === "PATCH") {
            if (fake.failTitle) return json(500, { error: "title store failed" });
            fake.sessions.get(m[1])!.title = body.title;
            return json(200, { id: m[1], title: body.title });
        }
        if (m && m[2] === "/abort") {
            fake.aborted.push(m[1]);
            return json(200, true);
        }
        if (m && m[2] === "/message") {
            fake.sessions.get(m[1])!.prompts.push(body);
            const r = fake.reply(body.parts[0].text);
            if (r.delayMs) await new Promise((ok) => setTimeout(ok, r.delayMs));
            if (res.destroyed) return;
            return json(200, {
                info: { id: "msg_a", role: "assistant", error: r.error, tokens: { input: 3, output: 5 } },
                parts: [{ type: "step-start" }, ...(r.text !== undefined ? [{ type: "text", text: r.text }] : []), { type: "step-finish" }],
            });
        }
        json(404, { error: "not found" });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    fake.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    fake.close = () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); });
    return fake;
}
