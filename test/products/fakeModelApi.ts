/**
 * A fake OpenAI-compatible model API (POST /v1/chat/completions, streamed or not) that counts its
 * calls: the upstream the agent server's provider points at in the bridge's product test and bench.
 * Each call answers `reply <n>: <words>`. The last user message steers it (markers anywhere in it):
 *   SLOW_MARKER            streams one word every 200 ms for a minute (an abort shows as the caller closing early)
 *   [fake:status=N]        answers HTTP N with an OpenAI error object ([fake:retry-after=S] adds Retry-After)
 *   [fake:fail-once]       the first call with this text answers 503, later ones answer normally
 *   [fake:slow-once]       the first call with this text streams as SLOW_MARKER does, later ones answer normally
 *   [fake:same]            answers "Hello! How can I help?" whatever the call number
 *   [fake:chars=N]         answers N characters ([fake:first-ms=M] waits M ms before the first, then
 *                          streams them in pieces of 8 every [fake:gap-ms=G] ms, default 1)
 *   [fake:tool=NAME ARGS]  first calls tool NAME with the JSON ARGS; once the conversation holds the
 *                          tool's result, answers with it ("tool said: <result>")
 *   [fake:words=N]         with SLOW_MARKER: N words, not 300
 * A request offering a StructuredOutput tool that it must call (opencode's structured output) gets
 * that tool called with {"reply": <n>, "ok": true}.
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
    /** performance.now() when the call arrived and when its first content was written. */
    at: number;
    firstTokenAt?: number;
    status: number;
}

export interface FakeModelApi {
    baseUrl: string;
    calls: ModelCall[];
    close(): Promise<void>;
}

export const replyText = (n: number) => `reply ${n}: the fake upstream answers with twenty-eight words of text, ${"so the stream has pieces ".repeat(3).trim()}, number ${n}.`;

const marker = (text: string, name: string) => new RegExp(`\\[fake:${name}(?:=([^\\]]*))?\\]`).exec(text);
const textOf = (content: unknown): string => (typeof content === "string" ? content : Array.isArray(content) ? content.map((p: any) => p?.text ?? "").join("") : "");

/** On 127.0.0.1 and a free port unless told (the e2e's real node: the run's "internet" address, port 443). */
export async function startFakeModelApi(host = "127.0.0.1", port = 0): Promise<FakeModelApi> {
    const calls: ModelCall[] = [];
    const failedOnce = new Set<string>();
    const server = http.createServer(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const c of req) chunks.push(c as Buffer);
        if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
            res.writeHead(404, { "Content-Type": "application/json" });
            return res.end(JSON.stringify({ error: { message: `no route ${req.url}`, type: "invalid_request_error" } }));
        }
        const body = JSON.parse(Buffer.concat(chunks).toString("utf8"));
        const messages: any[] = body.messages ?? [];
        const lastUser = textOf([...messages].reverse().find((m) => m.role === "user")?.content);
        const slowOnce = !!marker(lastUser, "slow-once") && !failedOnce.has(`slow:${lastUser}`);
        if (slowOnce) failedOnce.add(`slow:${lastUser}`);
        const slow = JSON.stringify(messages).includes(SLOW_MARKER) || slowOnce;
        const call: ModelCall = { n: calls.length + 1, body, text: "", closedEarly: false, ended: false, at: performance.now(), status: 200 };
        calls.push(call);
        res.on("close", () => {
            if (!call.ended) call.closedEarly = true;
        });
        const fail = (status: number, retryAfter?: string) => {
            call.status = status;
            call.ended = true;
            const message = status === 429 ? "Rate limit reached for requests (fake)" : status === 401 ? "Incorrect API key provided (fake)" : `the fake upstream failed with ${status}`;
            res.writeHead(status, { "Content-Type": "application/json", ...(retryAfter ? { "Retry-After": retryAfter } : {}) });
            res.end(JSON.stringify({ error: { message, type: status === 429 ? "requests" : "server_error", param: null, code: status === 429 ? "rate_limit_exceeded" : null } }));
        };
        const status = marker(lastUser, "status");
        if (status) return fail(Number(status[1]), marker(lastUser, "retry-after")?.[1]);
        if (marker(lastUser, "fail-once") && !failedOnce.has(lastUser)) {
            failedOnce.add(lastUser);
            return fail(503);
        }

        const id = `chatcmpl-fake-${call.n}`;
        const model = body.model;
        const created = Math.floor(Date.now() / 1000);
        const usage = { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 };
        // A tool call: opencode's structured output, or the one a marker asks for (until its result is in).
        const structured = (body.tools ?? []).some((t: any) => t.function?.name === "StructuredOutput");
        const tool = marker(lastUser, "tool");
        const toolResult = messages.filter((m) => m.role === "tool").map((m) => textOf(m.content)).at(-1);
        let toolCall: { name: string; arguments: string } | undefined;
        if (structured) toolCall = { name: "StructuredOutput", arguments: JSON.stringify({ reply: call.n, ok: true }) };
        else if (tool && toolResult === undefined) {
            const [, name, args] = /^(\S+)\s*([\s\S]*)$/.exec(tool[1] ?? "") ?? [];
            toolCall = { name, arguments: args || "{}" };
        }
        const chars = marker(lastUser, "chars");
        call.text = toolCall ? "" : slow ? "" : toolResult !== undefined ? `tool said: ${toolResult}` : marker(lastUser, "same") ? "Hello! How can I help?" : chars ? "x".repeat(Number(chars[1])).replace(/x{40}/g, (_m) => "The fake upstream writes a long answer. ") : replyText(call.n);
        const finish = toolCall ? "tool_calls" : "stop";
        const toolCalls = toolCall ? [{ index: 0, id: `call_${call.n}`, type: "function", function: toolCall }] : undefined;
        if (!body.stream) {
            call.ended = true;
            call.firstTokenAt = performance.now();
            res.writeHead(200, { "Content-Type": "application/json" });
            return res.end(JSON.stringify({ id, object: "chat.completion", created, model, choices: [{ index: 0, message: { role: "assistant", content: call.text || null, ...(toolCalls ? { tool_calls: toolCalls.map(({ index: _i, ...t }) => t) } : {}) }, finish_reason: finish }], usage }));
        }
        res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
        const event = (delta: Record<string, unknown>, fin: string | null, extra: Record<string, unknown> = {}) =>
            res.write(`data: ${JSON.stringify({ id, object: "chat.completion.chunk", created, model, choices: [{ index: 0, delta, finish_reason: fin }], ...extra })}\n\n`);
        const wait = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
        event({ role: "assistant", content: "" }, null);
        if (toolCalls) {
            event({ tool_calls: toolCalls }, null);
        } else if (slow) {
            const words = Number(marker(lastUser, "words")?.[1] ?? 300);
            for (let i = 0; i < words && !res.destroyed; i++) {
                call.firstTokenAt ??= performance.now();
                event({ content: `word${i} ` }, null);
                call.text += `word${i} `;
                await wait(200);
            }
        } else {
            const first = Number(marker(lastUser, "first-ms")?.[1] ?? 0);
            const gap = Number(marker(lastUser, "gap-ms")?.[1] ?? (chars ? 1 : 0));
            if (first) await wait(first);
            for (const piece of call.text.match(chars ? /.{1,8}/gs : /.{1,7}/gs) ?? []) {
                if (res.destroyed) return;
                call.firstTokenAt ??= performance.now();
                event({ content: piece }, null);
                if (gap) await wait(gap);
            }
        }
        if (res.destroyed) return;
        event({}, finish);
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
