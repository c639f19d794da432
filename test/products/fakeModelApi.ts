/**
 * A fake OpenAI-compatible model API (POST /v1/chat/completions, streamed or not) that counts its
 * calls: the upstream the agent server's provider points at in the bridge's product test. Each
 * call answers `reply <n>: <words>`; a request whose messages contain SLOW_MARKER streams one
 * word every 200 ms for a minute, so an abort shows as the caller closing the stream early.
 */
import * as http from "node:http";
import type { AddressInfo } from "node:net";

export const SLOW_MARKER = "please-answer-slowly";

export interface ModelCall {
    n: number;
    body: any;
    text: string;
    /** The caller closed the response before it ended. */
    closedEarly: boolean;
    ended: boolean;
}

export interface FakeModelApi {
    baseUrl: string;
    calls: ModelCall[];
    close(): Promise<void>;
}

export const replyText = (n: number) => `reply ${n}: the fake upstream answers with twenty-eight words of text, ${"so the stream has pieces ".repeat(3).trim()}, number ${n}.`;

/** On 127.0.0.1 and a free port unless told (the e2e's real node: the run's "internet" address, port 443). */
export async function startFakeModelApi(host = "127.0.0.1", port = 0): Promise<FakeModelApi> {
    const calls: ModelCall[] = [];
    const server = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
            res.writeHead(404, { "Content-Type": "application/json" });
            return res.end(JSON.stringify({ error: { message: `no route ${req.url}`, type: "invalid_request_error" } }));
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const slow = JSON.stringify(body.messages ?? []).includes(SLOW_MARKER);
        const call: ModelCall = { n: calls.length + 1, body, text: slow ? "" : replyText(calls.length + 1), closedEarly: false, ended: false };
        calls.push(call);
        res.on("close", () => {
            if (!call.ended) call.closedEarly = true;
        });
        const id = `chatcmpl-fake-${call.n}`;
        const model = body.model;
        const created = Math.floor(Date.now() / 1000);
        const usage = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
        if (!body.stream) {
            call.ended = true;
            res.writeHead(200, { "Content-Type": "application/json" });
            return res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message: { role: "assistant", content: call.text }, finish_reason: "stop" }], usage }));
        }
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        const event = (delta: Record<string, string>, finish: string | null, extra: Record<string, unknown> = {}) =>
            res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: finish }], ...extra })}\n\n`);
        event({ role: "assistant", content: "" }, null);
        if (slow) {
            for (let i = 0; i < 300 && !res.destroyed; i++) {
                event({ content: `word${i} ` }, null);
                call.text += `word${i} `;
                await new Promise((ok) => setTimeout(ok, 200));
            }
        } else {
            for (const piece of call.text.match(/.{1,7}/gs) ?? []) event({ content: piece }, null);
        }
        if (res.destroyed) return;
        event({}, "stop");
        event({}, null, { choices: [], usage });
        call.ended = true;
        res.end("data: [DONE]\n\n");
    });
    await new Promise<void>((ok) => server.listen(port, host, ok));
    return {
        baseUrl: `http://${host}:${(server.address() as AddressInfo).port}/v1`,
        calls,
        close: () => new Promise((ok) => { server.closeAllConnections(); server.close(() => ok()); }),
    };
}
