/**
 * How the bridge answers: a JSON body (sendJson), or a chat's answer as server-sent events in
 * OpenAI's chunk format (EventStream). Once a shutdown has begun, a response asks the client to
 * close its connection.
 *
 * The event stream: headers and the role chunk go out with the first text (or with the first
 * keep-alive comment line, after BRIDGE_KEEPALIVE_MS without any write, then one every
 * BRIDGE_KEEPALIVE_MS without one), then the text chunks, a stop chunk, the usage chunk when
 * stream_options.include_usage asks for it, and `data: [DONE]`. A failure after the headers is one
 * `data: {"error": ...}` event before `[DONE]`. Nothing is written to a client that is gone.
 */
import type * as http from "node:http";
import { chunk, usageChunk, type Usage } from "./openai";

/** `body` as JSON with `status`, unless a response has begun; `closing`: a shutdown has begun. */
export function sendJson(res: http.ServerResponse, status: number, body: unknown, closing: boolean, headers: Record<string, string> = {}): void {
    if (res.headersSent) return;
    const text = JSON.stringify(body);
    res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text), ...(closing ? { Connection: "close" } : {}), ...headers });
    res.end(text);
}

/** One chat's streamed answer (`id`, `model`: the completion's). */
export class EventStream {
    private headersOut = false;
    private lastWrite = Date.now();
    private keepAlive?: NodeJS.Timeout;

    constructor(
        private readonly res: http.ServerResponse,
        private readonly id: string,
        private readonly model: string,
        private readonly withUsage: boolean,
        private readonly closing: () => boolean,
    ) {}

    /** Every `ms`, a comment line when nothing was written for that long (the headers first, if not out yet). */
    keepAliveEvery(ms: number): void {
        this.keepAlive = setInterval(() => {
            if (this.res.destroyed || Date.now() - this.lastWrite < ms - 5) return;
            this.headers();
            this.res.write(": working\n\n");
            this.lastWrite = Date.now();
        }, ms);
    }

    stopKeepAlive(): void {
        if (this.keepAlive) clearInterval(this.keepAlive);
    }

    /** A piece of the answer's text; false once the client is gone. */
    text(piece: string): boolean {
        return this.event(chunk(this.id, this.model, { content: piece }, null, this.withUsage));
    }

    /** The end of an answer: the stop chunk, the usage chunk when asked for, [DONE]. */
    finish(usage: Usage): void {
        if (this.res.destroyed) return;
        this.event(chunk(this.id, this.model, {}, "stop", this.withUsage));
        if (this.withUsage) this.event(usageChunk(this.id, this.model, usage));
        this.res.end("data: [DONE]\n\n");
    }

    /** The end of an answer that failed after the headers: the error body as one event, [DONE]. */
    fail(body: unknown): void {
        if (this.res.destroyed) return;
        this.res.write(`data: ${JSON.stringify(body)}\n\n`);
        this.res.end("data: [DONE]\n\n");
    }

    private headers() {
        if (this.headersOut || this.res.destroyed) return;
        this.headersOut = true;
        this.res.writeHead(200, { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache", Connection: this.closing() ? "close" : "keep-alive", "X-Accel-Buffering": "no" });
        this.res.write(`data: ${JSON.stringify(chunk(this.id, this.model, { role: "assistant", content: "" }, null, this.withUsage))}\n\n`);
    }

    private event(v: unknown): boolean {
        if (this.res.destroyed) return false;
        this.headers();
        this.res.write(`data: ${JSON.stringify(v)}\n\n`);
        this.lastWrite = Date.now();
        return true;
    }
}
