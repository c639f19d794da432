/**
 * The model bridge (bridge/src) against a stand-in agent server: routes, client keys, the
 * agent server's credentials, one prompt per chat with opencode's own message IDs, streaming in
 * configured pieces, continuity through the agent server's session titles, and the outcome of
 * every failure. The real opencode is in test/products/bridge.products.ts.
 */
import { test, before, after, beforeEach } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { AddressInfo } from "node:net";
import { createBridge, type Bridge } from "../src/server";
import { readSettings, SettingsError, type Settings } from "../src/settings";
import { stripLeadingEcho, pieces } from "../src/openai";
import { startFakeAgent, type FakeAgent } from "./fakeAgent";
import { sseEvents } from "./sse";

let agent: FakeAgent;
let dir: string;
let keysFile: string;
const bridges: Bridge[] = [];
const KEY = "sk-bridge-test-key-1";

function settings(over: Partial<Settings> = {}): Settings {
    const base = readSettings({
        OPENCODE_BASE: agent.url,
        DEFAULT_MODEL: "upstream/gpt-5",
        OPENAI_STREAM_CHUNK_SIZE: "4",
        OPENAI_STREAM_CHUNK_DELAY_MS: "20",
        OPENCODE_SERVER_USERNAME: "agent",
        OPENCODE_SERVER_PASSWORD: "secret-password",
        BRIDGE_CLIENT_KEYS_FILE: keysFile,
    });
    return { ...base, ...over };
}

async function start(over: Partial<Settings> = {}): Promise<string> {
    const b = createBridge(settings(over), () => {});
    bridges.push(b);
    await new Promise<void>((ok) => b.server.listen(0, "127.0.0.1", ok));
    return `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`;
}

const chat = (base: string, body: unknown, key = KEY, signal?: AbortSignal) =>
    fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body), signal });

before(async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), "bridge-test-"));
    keysFile = path.join(dir, "api-keys");
    fs.writeFileSync(keysFile, `${KEY}\n`);
    agent = await startFakeAgent();
});
beforeEach(() => {
    agent.sessions.clear();
    agent.aborted.length = 0;
    agent.requests.length = 0;
    agent.reply = (text) => ({ text: `answer to ${text}` });
    agent.failTitle = false;
});
after(async () => {
    for (const b of bridges) await b.shutdown(100);
    await agent.close();
    fs.rmSync(dir, { recursive: true, force: true });
});

test("settings: a malformed value names the variable and the expected form; defaults are opencode-bridge's (3100, 4, 10, false)", () => {
    assert.throws(() => readSettings({ OPENCODE_BASE: "http://a:1/x", DEFAULT_MODEL: "gpt", OPENAI_STREAM_CHUNK_SIZE: "four", ENABLE_LEADING_ECHO_FILTER: "yes" }), (e: Error) =>
        e instanceof SettingsError
        && /OPENCODE_BASE: "http:\/\/a:1\/x"; expected http:\/\/<host>:<port> without a path/.test(e.message)
        && /DEFAULT_MODEL: "gpt"; expected <provider>\/<model>/.test(e.message)
        && /OPENAI_STREAM_CHUNK_SIZE: "four"; expected an integer/.test(e.message)
        && /ENABLE_LEADING_ECHO_FILTER: "yes"; expected true or false/.test(e.message)
        && /OPENCODE_SERVER_PASSWORD: not set/.test(e.message)
        && /BRIDGE_CLIENT_KEYS_FILE: not set/.test(e.message));
    const s = readSettings({ OPENCODE_BASE: "http://a:1", DEFAULT_MODEL: "p/m", OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "p", BRIDGE_CLIENT_KEYS_FILE: "/k" });
    assert.deepEqual([s.port, s.chunkSize, s.chunkDelayMs, s.leadingEchoFilter], [3100, 4, 10, false]);
});

test("client keys: 401 with an OpenAI error object without a key, with a wrong key and a non-Bearer scheme; the agent server is not called", async () => {
    const base = await start();
    for (const headers of [{}, { Authorization: "Bearer wrong" }, { Authorization: `Basic ${KEY}` }] as Record<string, string>[]) {
        const res = await fetch(`${base}/v1/models`, { headers });
        assert.equal(res.status, 401);
        const body = await res.json();
        assert.equal(body.error.code, "invalid_api_key");
        assert.equal(body.error.type, "invalid_request_error");
        assert.equal(typeof body.error.message, "string");
    }
    assert.equal((await chat(base, { messages: [{ role: "user", content: "hi" }] }, "")).status, 401);
    assert.deepEqual(agent.requests, []);
});

test("client keys: a rotated keys file takes effect without a restart (old key refused, new key admitted)", async () => {
    const base = await start();
    const get = (k: string) => fetch(`${base}/v1/models`, { headers: { Authorization: `Bearer ${k}` } }).then((r) => r.status);
    assert.equal(await get(KEY), 200);
    const tmp = `${keysFile}.new`;
    fs.writeFileSync(tmp, "# rotated\nsk-rotated-key\n");
    fs.renameSync(tmp, keysFile);
    try {
        assert.equal(await get("sk-rotated-key"), 200);
        assert.equal(await get(KEY), 401);
    } finally {
        fs.writeFileSync(keysFile, `${KEY}\n`);
    }
});

test("GET /v1/models: the OpenAI list with DEFAULT_MODEL; only /v1/*, /health and /ready are served", async () => {
    const base = await start();
    const auth = { Authorization: `Bearer ${KEY}` };
    const list = await (await fetch(`${base}/v1/models`, { headers: auth })).json();
    assert.deepEqual(list, { object: "list", data: [{ id: "upstream/gpt-5", object: "model", created: 0, owned_by: "upstream" }] });
    for (const p of ["/sessions", "/session/x", "/chat", "/stats", "/dashboard", "/", "/event"]) {
        const res = await fetch(`${base}${p}`, { headers: auth });
        assert.equal(res.status, 404, p);
    }
    assert.equal((await fetch(`${base}/health`)).status, 200);
    assert.equal((await fetch(`${base}/ready`)).status, 200);
});

test("/ready is 503 when the agent server refuses the bridge's credentials or is unreachable; /health stays 200", async () => {
    const wrong = await start({ agentPassword: "wrong" });
    assert.equal((await fetch(`${wrong}/ready`)).status, 503);
    const gone = await start({ agentBase: "http://127.0.0.1:1" });
    assert.equal((await fetch(`${gone}/ready`)).status, 503);
    assert.equal((await fetch(`${gone}/health`)).status, 200);
});

test("chat: 200 with the assistant's text; every agent-server request carries its basic authentication; one prompt, no client-made messageID", async () => {
    const base = await start();
    const res = await chat(base, { model: "upstream/gpt-5", messages: [{ role: "system", content: "be brief" }, { role: "user", content: "hello" }] });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.object, "chat.completion");
    assert.equal(body.choices[0].message.content, "answer to hello");
    assert.equal(body.choices[0].finish_reason, "stop");
    assert.deepEqual(body.usage, { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    assert.ok(agent.requests.every((r) => r.authorization === agent.auth));
    const [s] = [...agent.sessions.values()];
    assert.equal(s.prompts.length, 1);
    assert.equal(s.prompts[0].messageID, undefined);
    assert.deepEqual(s.prompts[0].model, { providerID: "upstream", modelID: "gpt-5" });
    assert.equal(s.prompts[0].system, "be brief");
    assert.ok(!/^New session/.test(s.title), "a default title would make opencode ask the model for one");
});

test("chat stream: role chunk, pieces of OPENAI_STREAM_CHUNK_SIZE characters OPENAI_STREAM_CHUNK_DELAY_MS apart, a stop chunk, then [DONE]", async () => {
    const base = await start({ chunkSize: 3, chunkDelayMs: 40 });
    agent.reply = () => ({ text: "abcdefghij" });
    const res = await chat(base, { messages: [{ role: "user", content: "x" }], stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const events = await sseEvents(res);
    assert.equal(events.at(-1)!.data, "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    const content = chunks.slice(1, -1);
    assert.deepEqual(content.map((c) => c.choices[0].delta.content), ["abc", "def", "ghi", "j"]);
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
    const gaps = events.slice(2, 5).map((e, k) => e.t - events[k + 1].t);
    // Receive times: under load a late piece and the next one can arrive together, so the pacing is
    // judged on the middle gap and the whole span, not on every gap (a bridge without pacing fails both).
    const middle = [...gaps].sort((a, b) => a - b)[1];
    const span = events[4].t - events[1].t;
    const seen = `pieces ${gaps.map((x) => x.toFixed(0)).join(", ")} ms apart`;
    assert.ok(middle >= 35, `${seen}; expected about 40 (timer slack 5)`);
    assert.ok(span >= 100, `${seen}; expected about 120 in all`);
});

test("continuity: the next turn finds its session by title in the agent server, from another bridge replica too", async () => {
    const a = await start();
    const b = await start();
    const m1 = { role: "user", content: "first" };
    const r1 = await (await chat(a, { messages: [m1] })).json();
    const r2 = await (await chat(b, { messages: [m1, r1.choices[0].message, { role: "user", content: "second" }] })).json();
    assert.equal(r2.choices[0].message.content, "answer to second");
    assert.equal(agent.sessions.size, 1, "the second turn went to the same session");
    const [s] = [...agent.sessions.values()];
    assert.deepEqual(s.prompts.map((p) => p.parts[0].text), ["first", "second"]);
    // Another client key with the same history does not get that session: it gets a transcript in a new one.
    fs.appendFileSync(keysFile, "sk-other\n");
    const r3 = await chat(a, { messages: [m1, r1.choices[0].message, { role: "user", content: "second" }] }, "sk-other");
    assert.equal(r3.status, 200);
    assert.equal(agent.sessions.size, 2);
    assert.match([...agent.sessions.values()][1].prompts[0].parts[0].text, /\[user\]\nfirst\n\n\[assistant\]\nanswer to first\n\n\[user\]\nsecond$/);
});

test("failures: model error 502, agent server refusing credentials 502, unreachable 502, bad request 400, other model 404", async () => {
    const base = await start();
    agent.reply = () => ({ error: { name: "APIError", data: { message: "upstream said no" } } });
    let res = await chat(base, { messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 502);
    assert.match((await res.json()).error.message, /upstream said no/);
    res = await chat(await start({ agentPassword: "wrong" }), { messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, "agent_server_auth");
    res = await chat(await start({ agentBase: "http://127.0.0.1:1" }), { messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 502);
    assert.equal((await res.json()).error.code, "agent_server_unreachable");
    res = await chat(base, { messages: [{ role: "assistant", content: "x" }] });
    assert.equal(res.status, 400);
    res = await chat(base, { model: "other/model", messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 404);
    assert.equal((await res.json()).error.code, "model_not_found");
});

test("time-out: 504 and the session is aborted at the agent server; streamed, an error event then [DONE]", async () => {
    const base = await start({ upstreamTimeoutMs: 300 });
    agent.reply = () => ({ text: "late", delayMs: 1500 });
    const res = await chat(base, { messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 504);
    assert.equal((await res.json()).error.code, "agent_server_timeout");
    assert.equal(agent.aborted.length, 1);
    const s = await chat(base, { messages: [{ role: "user", content: "y" }], stream: true });
    const text = await s.text();
    assert.match(text, /"code":"agent_server_timeout"[\s\S]*data: \[DONE\]\n\n$/);
    assert.equal(agent.aborted.length, 2);
});

test("a client that disconnects has its session aborted at the agent server", async () => {
    const base = await start();
    agent.reply = () => ({ text: "late", delayMs: 3000 });
    for (const stream of [false, true]) {
        const ctl = new AbortController();
        const p = chat(base, { messages: [{ role: "user", content: "x" }], stream }, KEY, ctl.signal).then((r) => r.text()).catch(() => "aborted");
        await new Promise((ok) => setTimeout(ok, 300));
        ctl.abort();
        await p;
        const deadline = Date.now() + 2000;
        while (agent.aborted.length < (stream ? 2 : 1) && Date.now() < deadline) await new Promise((ok) => setTimeout(ok, 20));
    }
    assert.equal(agent.aborted.length, 2);
});

test("leading echo filter strips a repeated prompt only when on", async () => {
    assert.equal(stripLeadingEcho("hello there\n\nHi!", "hello there"), "Hi!");
    assert.equal(stripLeadingEcho("hello there", "hello there"), "hello there");
    assert.equal(stripLeadingEcho("Hi!", "hello"), "Hi!");
    assert.deepEqual(pieces("a😀bc", 2), ["a😀", "bc"]);
    agent.reply = (t) => ({ text: `${t}\nreal answer` });
    const on = await (await chat(await start({ leadingEchoFilter: true }), { messages: [{ role: "user", content: "ping" }] })).json();
    assert.equal(on.choices[0].message.content, "real answer");
    const off = await (await chat(await start(), { messages: [{ role: "user", content: "ping" }] })).json();
    assert.equal(off.choices[0].message.content, "ping\nreal answer");
});

test("a streamed answer that takes a while keeps the connection busy with SSE comment lines before its pieces", async () => {
    const base = await start({ keepAliveMs: 50 });
    agent.reply = () => ({ text: "done", delayMs: 300 });
    const text = await (await chat(base, { messages: [{ role: "user", content: "x" }], stream: true })).text();
    const comments = text.split("\n\n").filter((e) => e.startsWith(": working")).length;
    assert.ok(comments >= 3, `${comments} comment lines in ${text}`);
    assert.ok(text.indexOf(": working") < text.indexOf('"content":"done"'));
    assert.match(text, /data: \[DONE\]\n\n$/);
});

test("an answer whose conversation key cannot be stored is still delivered (the next turn gets a transcript)", async () => {
    const base = await start();
    agent.failTitle = true;
    const res = await chat(base, { messages: [{ role: "user", content: "x" }] });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).choices[0].message.content, "answer to x");
});
