/**
 * How the real node's steps read curl's `-D -` output (steps/realnodePod.ts parseDump): the final
 * status after a 100 Continue, every Set-Cookie kept, header names case-insensitive, the body intact.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { parseDump, streamedText } from "./steps/realnodePod";

test("a 100 Continue block is passed over: the final status, its headers, the body", () => {
    const out = "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nSet-Cookie: n8n-auth=abc; Path=/; HttpOnly\r\nset-cookie: other=1\r\nContent-Type: application/json\r\n\r\n{\"data\":{}}\n\nsecond paragraph";
    const r = parseDump(out);
    assert.equal(r.status, 200);
    assert.deepEqual(r.headers["set-cookie"], ["n8n-auth=abc; Path=/; HttpOnly", "other=1"]);
    assert.deepEqual(r.headers["content-type"], ["application/json"]);
    assert.equal(r.body, "{\"data\":{}}\n\nsecond paragraph");
});

test("no answer (curl failed before a status line): no status, the output as the body", () => {
    const r = parseDump("curl: (7) Failed to connect to 10.96.0.1 port 80: Connection refused");
    assert.equal(r.status, undefined);
    assert.match(r.body, /Connection refused/);
});

test("an error status with an empty body", () => {
    const r = parseDump("HTTP/1.1 404 Not Found\nContent-Length: 0\n\n");
    assert.equal(r.status, 404);
    assert.equal(r.body, "");
});

test("an event stream is read as its client assembles it: deltas joined across cuts, [DONE] and a cut-off last event passed over", () => {
    const event = (content: string) => `data: ${JSON.stringify({ object: "chat.completion.chunk", choices: [{ index: 0, delta: { content }, finish_reason: null }] })}\n\n`;
    // As the real node's first stream came back through the bridge: the upstream's "word0 ", "word1 " cut elsewhere.
    const sse = `data: ${JSON.stringify({ choices: [{ index: 0, delta: { role: "assistant", content: "" } }] })}\n\n` + ["word", "0", " wor", "d1", " wor", "d2 "].map(event).join("") + "data: [DONE]\n\n" + 'data: {"choices":[{"delta":{"content":"cut';
    assert.equal(streamedText(sse), "word0 word1 word2 ");
    assert.equal(streamedText(sse.replace(/\n/g, "\r\n")), "word0 word1 word2 ");
    assert.equal(streamedText(""), "");
});
