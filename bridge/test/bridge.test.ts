/**
 * The model bridge (bridge/src) against a stand-in agent server (fakeAgent.ts): settings and keys
 * checked at start without repeating a secret, routes, every request field honoured or refused,
 * streaming as opencode writes, model failures at once with the turn taken out again, continuations
 * serialised, the drain, the body budget, the idle sweep, the log lines of a failure and the agent
 * server's event stream read from any chunking. The real opencode is in
 * test/products/bridge.products.ts.
 */
import { test, before, after, beforeEach } from "node:test";
import * as assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import * as os from "node:os";
import * as path from "node:path";
import type { AddressInfo } from "node:net";
import { createBridge, type Bridge } from "../src/server";
import { readSettings, SettingsError, type Settings } from "../src/settings";
import { ClientKeys, KeysFileError } from "../src/clientKeys";
import { parseChatRequest, pieces, stripLeadingEcho, visibleWithEchoFilter } from "../src/openai";
import { retryFailure } from "../src/turn";
import { AgentServer, type AgentEvent } from "../src/agentServer";
import { startFakeAgent, type FakeAgent } from "./fakeAgent";
import { sseEvents } from "./sse";

let agent: FakeAgent;
let dir: string;
let keysFile: string;
const bridges: Bridge[] = [];
const KEY = "sk-bridge-test-key-1";
const lines: string[] = [];

function settings(over: Partial<Settings> = {}): Settings {
    const base = readSettings({
        OPENCODE_BASE: agent.url,
        DEFAULT_MODEL: "upstream/gpt-5",
        OPENAI_STREAM_CHUNK_SIZE: "4",
        OPENAI_STREAM_CHUNK_DELAY_MS: "20",
        OPENCODE_SERVER_USERNAME: "agent",
        OPENCODE_SERVER_PASSWORD: "secret-password",
        BRIDGE_CLIENT_KEYS_FILE: keysFile,
        BRIDGE_SESSION_IDLE_MS: "0",
    });
    return { ...base, ...over };
}

async function startWith(over: Partial<Settings> = {}): Promise<{ url: string; bridge: Bridge }> {
    const b = createBridge(settings(over), (l) => lines.push(l));
    bridges.push(b);
    await new Promise<void>((ok) => b.server.listen(0, "127.0.0.1", ok));
    return { url: `http://127.0.0.1:${(b.server.address() as AddressInfo).port}`, bridge: b };
}
const start = async (over: Partial<Settings> = {}) => (await startWith(over)).url;

const chat = (base: string, body: unknown, key = KEY, signal?: AbortSignal) =>
    fetch(`${base}/v1/chat/completions`, { method: "POST", headers: { "Content-Type": "application/json", ...(key ? { Authorization: `Bearer ${key}` } : {}) }, body: JSON.stringify(body), signal });
const user = (content: string) => ({ role: "user", content });
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));

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
    agent.deletedMessages.length = 0;
    agent.rejected.length = 0;
    agent.reply = (text) => ({ text: `answer to ${text}` });
    agent.failTitle = false;
    agent.deleteDelayMs = 0;
    lines.length = 0;
});
after(async () => {
    for (const b of bridges) await b.shutdown(100);
    await agent.close();
    fs.rmSync(dir, { recursive: true, force: true });
});

test("settings: a malformed value names the variable and the expected form; defaults are opencode-bridge's (3100, 4, 10, false)", () => {
    assert.throws(() => readSettings({ OPENCODE_BASE: "http://a:1/x", DEFAULT_MODEL: "gpt", OPENAI_STREAM_CHUNK_SIZE: "four", ENABLE_LEADING_ECHO_FILTER: "yes" }), (e: Error) =>
        e instanceof SettingsError
        && /OPENCODE_BASE: http:\/\/a:1\/\*\*\*; expected http:\/\/<host>:<port> without a path/.test(e.message)
        && /DEFAULT_MODEL: "gpt"; expected <provider>\/<model>/.test(e.message)
        && /OPENAI_STREAM_CHUNK_SIZE: "four"; expected an integer/.test(e.message)
        && /ENABLE_LEADING_ECHO_FILTER: "yes"; expected true or false/.test(e.message)
        && /OPENCODE_SERVER_PASSWORD: not set/.test(e.message)
        && /BRIDGE_CLIENT_KEYS_FILE: not set/.test(e.message));
    const s = readSettings({ OPENCODE_BASE: "http://a:1", DEFAULT_MODEL: "p/m", OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "p", BRIDGE_CLIENT_KEYS_FILE: "/k" });
    assert.deepEqual([s.port, s.chunkSize, s.chunkDelayMs, s.leadingEchoFilter, s.agent, s.rejectAsks], [3100, 4, 10, false, "bridge", true]);
});

test("42.7 settings: a model id with more slashes is opencode's <provider>/<model> (split at the first)", () => {
    const s = readSettings({ OPENCODE_BASE: "http://a:1", DEFAULT_MODEL: "openrouter/anthropic/claude-sonnet-4", OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "p", BRIDGE_CLIENT_KEYS_FILE: "/k" });
    assert.equal(s.defaultModel, "openrouter/anthropic/claude-sonnet-4");
    for (const bad of ["openrouter/", "/m", "a//b", "a/b/", "a b/c"]) assert.throws(() => readSettings({ OPENCODE_BASE: "http://a:1", DEFAULT_MODEL: bad, OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "p", BRIDGE_CLIENT_KEYS_FILE: "/k" }), SettingsError, bad);
});

test("42.6 settings: no message repeats the agent server's password, from OPENCODE_BASE or its own variable", () => {
    const secret = "Sup3rSecretPassw0rd";
    for (const env of [
        { OPENCODE_BASE: `http://agent:${secret}@agent-server:4000` },
        { OPENCODE_BASE: `http://agent-server:4000/?token=${secret}` },
        { OPENCODE_BASE: `http://agent-server:4000/${secret}` },
        { OPENCODE_BASE: `http://a:${secret}@:99999` },
        { OPENCODE_SERVER_PASSWORD: `${secret}\n` },
    ]) {
        assert.throws(() => readSettings({ OPENCODE_BASE: "http://a:1", DEFAULT_MODEL: "p/m", OPENCODE_SERVER_USERNAME: "u", OPENCODE_SERVER_PASSWORD: "p", BRIDGE_CLIENT_KEYS_FILE: "/k", ...env }), (e: Error) => {
            assert.ok(e instanceof SettingsError, e.message);
            assert.ok(!e.message.includes(secret), e.message);
            return true;
        });
    }
});

test("42.7 keys file: a directory, a FIFO, a missing file, an empty file and a key a client cannot send stop the start naming the file and line (never the key)", () => {
    const fifo = path.join(dir, "fifo");
    execFileSync("mkfifo", [fifo]);
    const spaced = path.join(dir, "spaced");
    fs.writeFileSync(spaced, "# keys\nsk good-but-spaced\nsk-ok\n");
    const unicode = path.join(dir, "unicode");
    fs.writeFileSync(unicode, "sk-ok\nsk-clé-secrète\n");
    const empty = path.join(dir, "empty");
    fs.writeFileSync(empty, "# nothing\n\n");
    for (const [file, want] of [[dir, /is a directory/], [fifo, /is a FIFO/], [path.join(dir, "missing"), /ENOENT/], [empty, /holds no usable key/], [spaced, /line 2: not a key/], [unicode, /line 2: not a key/]] as const) {
        assert.throws(() => new ClientKeys(file), (e: Error) => e instanceof KeysFileError && want.test(e.message) && e.message.includes(file) && !/clé|good-but-spaced/.test(e.message), String(file));
    }
});

test("42.7 keys file: replaced at run time by a directory or a FIFO, every request is 401 (logged once), /health answers, nothing blocks", async () => {
    const file = path.join(dir, "rotating");
    fs.writeFileSync(file, `${KEY}\n`);
    const base = await start({ apiKeysFile: file });
    const get = () => fetch(`${base}/v1/models`, { headers: { Authorization: `Bearer ${KEY}` } }).then((r) => r.status);
    assert.equal(await get(), 200);
    fs.rmSync(file);
    execFileSync("mkfifo", [file]);
    assert.equal(await get(), 401);
    assert.equal((await fetch(`${base}/health`)).status, 200);
    fs.rmSync(file);
    fs.mkdirSync(file);
    assert.equal(await get(), 401);
    assert.equal(await get(), 401);
    assert.equal(lines.filter((l) => l.includes("every request is refused")).length, 2, lines.join("\n"));
    fs.rmdirSync(file);
    fs.writeFileSync(file, `${KEY}\nnot a key\n`);
    assert.equal(await get(), 200);
    assert.ok(lines.some((l) => /line 2: not a key.*ignored/.test(l)) && !lines.some((l) => l.includes("not a key\n")));
});

test("client keys: 401 with an OpenAI error object without a key, with a wrong key and a non-Bearer scheme; the agent server is not called", async () => {
    const base = await start();
    agent.requests.length = 0;
    for (const headers of [{}, { Authorization: "Bearer wrong" }, { Authorization: `Basic ${KEY}` }] as Record<string, string>[]) {
        const res = await fetch(`${base}/v1/models`, { headers });
        assert.equal(res.status, 401);
        const body = await res.json();
        assert.equal(body.error.code, "invalid_api_key");
    }
    assert.equal((await chat(base, { messages: [user("hi")] }, "")).status, 401);
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

test("GET /v1/models and /v1/models/<id>: the OpenAI shapes; a bad percent-encoding is 404 (42.7), not 500; only /v1/*, /health and /ready are served", async () => {
    const base = await start();
    const auth = { Authorization: `Bearer ${KEY}` };
    const list = await (await fetch(`${base}/v1/models`, { headers: auth })).json();
    assert.deepEqual(list, { object: "list", data: [{ id: "upstream/gpt-5", object: "model", created: 0, owned_by: "upstream" }] });
    assert.equal((await fetch(`${base}/v1/models/upstream%2Fgpt-5`, { headers: auth })).status, 200);
    const bad = await fetch(`${base}/v1/models/%E0%A4%A`, { headers: auth });
    assert.equal(bad.status, 404);
    assert.equal((await bad.json()).error.code, "model_not_found");
    for (const p of ["/sessions", "/session/x", "/chat", "/", "/event"]) assert.equal((await fetch(`${base}${p}`, { headers: auth })).status, 404, p);
    assert.equal((await fetch(`${base}/health`)).status, 200);
    assert.equal((await fetch(`${base}/ready`)).status, 200);
});

test("/ready is 503 when the agent server refuses the bridge's credentials, is unreachable or lacks the chat agent; /health stays 200", async () => {
    assert.equal((await fetch(`${await start({ agentPassword: "wrong" })}/ready`)).status, 503);
    const gone = await start({ agentBase: "http://127.0.0.1:1" });
    assert.equal((await fetch(`${gone}/ready`)).status, 503);
    assert.equal((await fetch(`${gone}/health`)).status, 200);
    const r = await fetch(`${await start({ agent: "nobody" })}/ready`);
    assert.equal(r.status, 503);
    assert.match((await r.json()).status, /no agent nobody/);
});

test("41.5 request fields: each one the bridge cannot honour is refused with 400 naming it; defaults and null pass; content null is refused (42.7)", () => {
    const ok = { messages: [user("x")] };
    const param = (body: unknown) => {
        try {
            parseChatRequest(body);
            return "accepted";
        } catch (e) {
            assert.equal((e as any).status, 400);
            return (e as any).param;
        }
    };
    for (const [field, v] of Object.entries({ tools: [{ type: "function" }], functions: [{}], n: 3, max_tokens: 10, max_completion_tokens: 10, stop: "x", temperature: 0.5, top_p: 0.9, seed: 1, logit_bias: { 1: 1 }, logprobs: true, top_logprobs: 2, presence_penalty: 1, frequency_penalty: 1, reasoning_effort: "low", audio: {}, modalities: ["audio"], prediction: {}, store: true, metadata: { a: "b" }, tool_choice: "auto", parallel_tool_calls: true, service_tier: "flex", whatever: 1 }))
        assert.equal(param({ ...ok, [field]: v }), field, field);
    for (const [field, v] of Object.entries({ temperature: 1, top_p: 1, n: 1, logprobs: false, store: false, tool_choice: "none", service_tier: "auto", modalities: ["text"], max_tokens: null, user: "u1", safety_identifier: "u1" }))
        assert.equal(param({ ...ok, [field]: v }), "accepted", field);
    assert.equal(param({ messages: [{ role: "user", content: null }] }), "messages[0].content");
    assert.equal(param({ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "x" } }] }] }), "messages[0].content[0].type");
    assert.equal(param({ messages: [{ role: "tool", content: "x", tool_call_id: "c" }, user("x")] }), "messages[0].role");
    assert.equal(param({ messages: [{ role: "assistant", content: "x", tool_calls: [{ id: "c" }] }, user("x")] }), "messages[0].tool_calls");
    assert.equal(param({ messages: [{ role: "assistant", content: "x", refusal: null, annotations: [] }, user("x")] }), "accepted");
    assert.equal(param({ messages: [user("x")], stream_options: { include_usage: true } }), "stream_options");
    assert.equal(param({ messages: [user("x")], response_format: { type: "json_schema", json_schema: { name: "x" } } }), "response_format.json_schema.schema");
    assert.equal(param({ messages: [user("x")], user: "a", safety_identifier: "b" }), "safety_identifier");
    assert.deepEqual(parseChatRequest({ messages: [user("x")], response_format: { type: "json_object" } }).format, { type: "json_schema", schema: { type: "object" } });
});

test("chat: 200 with the assistant's text, usage from the turn; one prompt as the bridge agent, no client-made messageID, the system text, a session title that spares opencode's title call", async () => {
    const base = await start();
    const res = await chat(base, { model: "upstream/gpt-5", messages: [{ role: "system", content: "be brief" }, user("hello")] });
    assert.equal(res.status, 200);
    const body = await res.json();
    assert.equal(body.choices[0].message.content, "answer to hello");
    assert.deepEqual(body.usage, { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 });
    assert.ok(agent.requests.every((r) => r.authorization === agent.auth));
    const [s] = [...agent.sessions.values()];
    assert.equal(s.prompts.length, 1);
    assert.equal(s.prompts[0].messageID, undefined);
    assert.equal(s.prompts[0].agent, "bridge");
    assert.deepEqual(s.prompts[0].model, { providerID: "upstream", modelID: "gpt-5" });
    assert.equal(s.prompts[0].system, "be brief");
    assert.match(s.title, /^bridge-c-[0-9a-f]{40}$/);
});

test("41.4 stream: the first piece leaves while the agent still writes; pieces of at most the chunk size at least the delay apart; stop, usage chunk, [DONE]", async () => {
    const base = await start({ chunkSize: 3, chunkDelayMs: 30 });
    agent.reply = () => ({ text: "abcdefghijkl", pieces: 4, gapMs: 250, delayMs: 50 });
    const res = await chat(base, { messages: [user("x")], stream: true, stream_options: { include_usage: true } });
    const events = await sseEvents(res);
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    assert.equal(events.at(-1)!.data, "[DONE]");
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    assert.equal(chunks[0].usage, null);
    const content = events.filter((_e, k) => chunks[k]?.choices?.[0]?.delta?.content);
    assert.equal(content.map((e) => JSON.parse(e.data).choices[0].delta.content).join(""), "abcdefghijkl");
    assert.ok(content.every((e) => Array.from(JSON.parse(e.data).choices[0].delta.content as string).length <= 3));
    // The agent writes for 750 ms: a bridge that waited for the turn's end would send every piece within about 12 x 30 ms.
    assert.ok(content.at(-1)!.t - content[0].t > 500, `pieces from ${content[0].t.toFixed(0)} to ${content.at(-1)!.t.toFixed(0)} ms: the first did not leave while the agent wrote`);
    const gaps = content.slice(1).map((e, k) => e.t - content[k].t);
    assert.ok(gaps.filter((g) => g < 25).length <= 1, `gaps ${gaps.map((g) => g.toFixed(0))}`);
    assert.equal(chunks.at(-2).choices[0].finish_reason, "stop");
    assert.deepEqual(chunks.at(-1), { ...chunks.at(-1), choices: [], usage: { prompt_tokens: 3, completion_tokens: 5, total_tokens: 8 } });
});

test("streamed answer with the leading echo filter: the echo is held back and never sent", async () => {
    const base = await start({ leadingEchoFilter: true, chunkDelayMs: 0 });
    agent.reply = (t) => ({ text: `${t}\n\nreal answer`, pieces: 6, gapMs: 10 });
    const text = await (await chat(base, { messages: [user("ping pong")], stream: true })).text();
    const content = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)).choices[0]?.delta?.content ?? "").join("");
    assert.equal(content, "real answer");
    assert.equal(visibleWithEchoFilter("ping", "ping pong", false), "");
    assert.equal(visibleWithEchoFilter("pong", "ping pong", false), "pong");
    assert.equal(visibleWithEchoFilter("ping pong", "ping pong", true), "ping pong");
});

test("a streamed answer that takes a while keeps the connection busy with SSE comment lines before its first piece", async () => {
    const base = await start({ keepAliveMs: 100 });
    agent.reply = () => ({ text: "done", delayMs: 450 });
    const text = await (await chat(base, { messages: [user("x")], stream: true })).text();
    const comments = text.split("\n\n").filter((e) => e.startsWith(": working")).length;
    assert.ok(comments >= 3, `${comments} comment lines in ${text}`);
    assert.ok(text.indexOf(": working") < text.indexOf('"content":"done"'));
    assert.match(text, /data: \[DONE\]\n\n$/);
});

test("41.1 opencode's retry status ends the turn at once: 429 with Retry-After for a rate limit, 502 with the cause otherwise; the session aborted and the turn taken out", async () => {
    const base = await start();
    agent.reply = () => ({ retry: { message: "Rate limit reached for requests", inMs: 7000 } });
    const t = performance.now();
    let res = await chat(base, { messages: [user("x")] });
    assert.ok(performance.now() - t < 1000);
    assert.equal(res.status, 429);
    assert.equal(res.headers.get("retry-after"), "7");
    assert.match((await res.json()).error.message, /Rate limit reached/);
    assert.equal(agent.aborted.length, 1);
    assert.equal(agent.sessions.size, 0, "the failed new conversation's session is deleted");
    agent.reply = () => ({ retry: { message: "Service Unavailable", inMs: 2000 } });
    res = await chat(base, { messages: [user("x")] });
    assert.equal(res.status, 502);
    assert.equal(res.headers.get("retry-after"), null);
    assert.match((await res.json()).error.message, /the model API failed: Service Unavailable/);
    assert.deepEqual(retryFailure({ attempt: 2, message: "Provider is overloaded", next: 1000 + 4000 }, 1000).retryAfterSeconds, undefined);
});

test("41.1 a failure opencode does not retry carries the model API's status: 401 is 502 (not retried by the SDKs), 400 stays 400", async () => {
    const base = await start();
    agent.reply = () => ({ error: { name: "APIError", data: { message: "Incorrect API key provided", statusCode: 401 } } });
    let res = await chat(base, { messages: [user("x")] });
    assert.equal(res.status, 502);
    assert.equal(res.headers.get("x-should-retry"), "false");
    assert.match((await res.json()).error.message, /refused the agent server's key \(401\).*Incorrect API key/);
    agent.reply = () => ({ error: { name: "APIError", data: { message: "bad request", statusCode: 400 } } });
    res = await chat(base, { messages: [user("x")] });
    assert.equal(res.status, 400);
});

test("41.3 a failed continuation is taken out of its session, so the retried request is one turn in the same session", async () => {
    const base = await start();
    const m1 = user("first");
    const r1 = await (await chat(base, { messages: [m1] })).json();
    const history = [m1, r1.choices[0].message];
    agent.reply = () => ({ retry: { message: "Service Unavailable", inMs: 2000 } });
    assert.equal((await chat(base, { messages: [...history, user("second")] })).status, 502);
    assert.equal(agent.deletedMessages.length, 2, "the turn's user and assistant messages");
    agent.reply = (t) => ({ text: `answer to ${t}` });
    const r2 = await (await chat(base, { messages: [...history, user("second")] })).json();
    assert.equal(r2.choices[0].message.content, "answer to second");
    const convs = [...agent.sessions.values()].filter((x) => x.title.startsWith("bridge-c-"));
    assert.equal(convs.length, 1);
    const [s] = convs;
    assert.deepEqual(s.messages.length, 4, "two turns, not three");
});

test("continuity: the next turn finds its session by title, from another replica too; another key or end user with the same history gets a transcript in a new session", async () => {
    const a = await start();
    const b = await start();
    const m1 = user("first");
    const r1 = await (await chat(a, { messages: [m1] })).json();
    const r2 = await (await chat(b, { messages: [m1, r1.choices[0].message, user("second")] })).json();
    assert.equal(r2.choices[0].message.content, "answer to second");
    assert.equal([...agent.sessions.values()].filter((s) => s.title.startsWith("bridge-c-")).length, 1);
    fs.appendFileSync(keysFile, "sk-other\n");
    assert.equal((await chat(a, { messages: [m1, r1.choices[0].message, user("second")] }, "sk-other")).status, 200);
    assert.equal((await chat(a, { messages: [m1, r1.choices[0].message, user("second")], user: "someone" })).status, 200);
    const convs = [...agent.sessions.values()].filter((s) => s.title.startsWith("bridge-c-"));
    assert.equal(convs.length, 3);
    for (const s of convs.slice(1)) assert.match(s.prompts[0].parts[0].text, /\[user\]\nfirst\n\n\[assistant\]\nanswer to first\n\n\[user\]\nsecond$/);
});

test("41.2 concurrent continuations of one conversation are serialised: the second waits for the first, then (the history having moved) gets its own session", async () => {
    const a = await start();
    const b = await start();
    const m1 = user("first");
    const r1 = await (await chat(a, { messages: [m1] })).json();
    const history = [m1, r1.choices[0].message];
    agent.reply = (t) => ({ text: `answer to ${t}`, delayMs: 300 });
    const [x, y] = await Promise.all([chat(a, { messages: [...history, user("q-a")] }), sleep(50).then(() => chat(b, { messages: [...history, user("q-b")] }))]);
    assert.equal((await x.json()).choices[0].message.content, "answer to q-a");
    assert.match((await y.json()).choices[0].message.content, /^answer to The conversation so far:[\s\S]*\[user\]\nq-b$/, "the waiter's history moved on: its own session with its transcript");
    const convs = [...agent.sessions.entries()].filter(([, s]) => s.title.startsWith("bridge-c-"));
    assert.equal(convs.length, 2);
    for (const [, s] of convs) assert.ok(s.prompts.every((p) => !(JSON.stringify(p).includes("q-a") && JSON.stringify(p).includes("q-b"))));
    await sleep(100);
    assert.equal([...agent.sessions.values()].filter((s) => s.title.startsWith("bridge-l-")).length, 0, "the locks are released");
});

test("time-out: 504 and the turn aborted and taken out; streamed, an error event then [DONE]", async () => {
    const base = await start({ upstreamTimeoutMs: 300 });
    agent.reply = () => ({ text: "late", delayMs: 1500 });
    const res = await chat(base, { messages: [user("x")] });
    assert.equal(res.status, 504);
    assert.equal((await res.json()).error.code, "agent_server_timeout");
    assert.equal(agent.aborted.length, 1);
    const s = await chat(base, { messages: [user("y")], stream: true });
    assert.equal(s.status, 504, "nothing was streamed yet: the status says it");
});

test("a client that disconnects has its turn aborted at the agent server", async () => {
    const base = await start();
    agent.reply = () => ({ text: "late", delayMs: 3000 });
    for (const stream of [false, true]) {
        const ctl = new AbortController();
        const p = chat(base, { messages: [user("x")], stream }, KEY, ctl.signal).then((r) => r.text()).catch(() => "aborted");
        await sleep(300);
        ctl.abort();
        await p;
        const deadline = Date.now() + 10_000;
        while (agent.aborted.length < (stream ? 2 : 1) && Date.now() < deadline) await sleep(20);
    }
    assert.equal(agent.aborted.length, 2);
});

test("41.6 a permission opencode asks in a chat's session is rejected at once", async () => {
    const base = await start();
    agent.reply = () => ({ ask: true, text: "ok", delayMs: 100 });
    assert.equal((await chat(base, { messages: [user("x")] })).status, 200);
    assert.deepEqual(agent.rejected, ["/permission/per_1/reply"]);
});

test("an answer whose conversation key cannot be stored is still delivered (the next turn gets a transcript)", async () => {
    const base = await start();
    agent.failTitle = true;
    const res = await chat(base, { messages: [user("x")] });
    assert.equal(res.status, 200);
    assert.equal((await res.json()).choices[0].message.content, "answer to x");
});

test("41.8 request bodies: larger than BRIDGE_REQUEST_MEMORY_BYTES is 413; more than fit at once is 503 with Retry-After", async () => {
    const base = await start({ requestMemoryBytes: 100_000 });
    assert.equal((await chat(base, { messages: [user("a".repeat(200_000))] })).status, 413);
    agent.reply = (t) => ({ text: `answer to ${t.length}`, delayMs: 200 });
    const many = await Promise.all(Array.from({ length: 4 }, () => chat(base, { messages: [user("a".repeat(40_000))] })));
    const statuses = many.map((r) => r.status).sort();
    assert.ok(statuses.includes(200) && statuses.includes(503), JSON.stringify(statuses));
    assert.equal(many.find((r) => r.status === 503)!.headers.get("retry-after"), "1");
});

test("41.8 a body's memory goes back once its prompt is sent, and when the request is refused: another body as large is taken meanwhile", async () => {
    const base = await start({ requestMemoryBytes: 100_000 });
    assert.equal((await chat(base, { messages: [user("a".repeat(60_000))], temperature: 0.5 })).status, 400);
    assert.equal((await chat(base, { messages: [user("a".repeat(60_000))], temperature: 0.5 })).status, 400, "the refused body's memory went back");
    // Another model is refused after the body is parsed: its memory goes back too.
    assert.equal((await chat(base, { model: "other", messages: [user("a".repeat(60_000))] })).status, 404);
    assert.equal((await chat(base, { model: "other", messages: [user("a".repeat(60_000))] })).status, 404, "the 404's body memory went back");
    agent.reply = (t) => ({ text: `answer to ${t.length}`, delayMs: 800 });
    const first = chat(base, { messages: [user("a".repeat(60_000))] });
    const deadline = Date.now() + 5000;
    while (![...agent.sessions.values()].some((x) => x.prompts.length > 0) && Date.now() < deadline) await sleep(10);
    const second = await chat(base, { messages: [user("b".repeat(60_000))] });
    assert.equal(second.status, 200, "the running turn's body is not held any more");
    assert.equal((await first).status, 200);
});

test("stream: the event stream's headers; a failure after them is one error event, then [DONE], after the role chunk and the comment lines", async () => {
    const base = await start({ upstreamTimeoutMs: 400, keepAliveMs: 100 });
    agent.reply = () => ({ text: "late", delayMs: 1500 });
    const res = await chat(base, { messages: [user("x")], stream: true });
    assert.equal(res.status, 200);
    assert.deepEqual(["content-type", "cache-control", "x-accel-buffering"].map((h) => res.headers.get(h)), ["text/event-stream; charset=utf-8", "no-cache", "no"]);
    const events = (await res.text()).split("\n\n");
    assert.equal(events.pop(), "", "every event ends with a blank line");
    assert.deepEqual(JSON.parse(events[0].slice("data: ".length)).choices[0].delta, { role: "assistant", content: "" });
    assert.equal(events.at(-1), "data: [DONE]");
    const error = JSON.parse(events.at(-2)!.slice("data: ".length));
    assert.deepEqual(Object.keys(error), ["error"]);
    assert.equal(error.error.code, "agent_server_timeout");
    assert.match(error.error.message, /within 400 ms \(BRIDGE_UPSTREAM_TIMEOUT_MS\)/);
    const between = events.slice(1, -2);
    assert.ok(between.length >= 2 && between.every((e) => e === ": working"), JSON.stringify(between));
    assert.equal(agent.sessions.size, 0, "the new conversation's session is deleted");
});

test("logs: a failed turn names its session and what became of it, a 5xx or 429 names the chat, every /v1 request has its access line; a client gone is no error", async () => {
    const base = await start();
    agent.reply = () => ({ retry: { message: "Rate limit reached for requests", inMs: 7000 } });
    assert.equal((await (await chat(base, { messages: [user("x")] })).text()).includes("rate_limit_exceeded"), true);
    const m1 = user("first");
    agent.reply = (t) => ({ text: `answer to ${t}` });
    const r1 = await (await chat(base, { messages: [m1] })).json();
    agent.reply = () => ({ retry: { message: "Service Unavailable", inMs: 2000 } });
    assert.equal((await chat(base, { messages: [m1, r1.choices[0].message, user("second")] })).status, 502);
    agent.reply = () => ({ text: "late", delayMs: 3000 });
    const ctl = new AbortController();
    const gone = chat(base, { messages: [user("y")] }, KEY, ctl.signal).catch(() => "aborted");
    await sleep(300);
    ctl.abort();
    await gone;
    const deadline = Date.now() + 5000;
    while (!lines.some((l) => l.includes("the client went away")) && Date.now() < deadline) await sleep(20);
    await sleep(50);
    const failed = lines.filter((l) => /^session |^chat /.test(l));
    assert.equal(failed.length, 5, failed.join("\n"));
    assert.match(failed[0], /^session ses_\d+: turn status \(the model API is rate limiting: Rate limit reached for requests\); its new session deleted$/);
    assert.match(failed[1], /^chat chatcmpl-[0-9a-f]{24}: 429 the model API is rate limiting: Rate limit reached for requests$/);
    assert.match(failed[2], /^session ses_\d+: turn status \(the model API failed: Service Unavailable\); taken out of the session$/);
    assert.match(failed[3], /^chat chatcmpl-[0-9a-f]{24}: 502 the model API failed: Service Unavailable$/);
    assert.match(failed[4], /^session ses_\d+: turn aborted \(the client went away\); its new session deleted$/);
    const access = lines.filter((l) => l.startsWith("POST "));
    assert.deepEqual(access.map((l) => l.replace(/ \d+ms$/, " <t>ms")), ["POST /v1/chat/completions 429 <t>ms", "POST /v1/chat/completions 200 <t>ms", "POST /v1/chat/completions 502 <t>ms"]);
});

test("41.7 shutdown: running chats finish, new ones get 503, /ready is 503; what outlives the grace is aborted (503)", async () => {
    const { url, bridge } = await startWith();
    agent.reply = () => ({ text: "finished", delayMs: 400 });
    const running = chat(url, { messages: [user("x")] });
    await sleep(100);
    const down = bridge.shutdown(5000);
    await sleep(50);
    const refused = await chat(url, { messages: [user("y")] }).then((r) => r.status, () => "refused");
    assert.ok(refused === 503 || refused === "refused", String(refused));
    const res = await running;
    assert.equal(res.status, 200);
    assert.equal((await res.json()).choices[0].message.content, "finished");
    await down;
    const second = await startWith();
    agent.reply = () => ({ text: "never", delayMs: 5000 });
    const long = chat(second.url, { messages: [user("z")] });
    await sleep(100);
    await second.bridge.shutdown(200);
    const aborted = await long;
    assert.equal(aborted.status, 503);
    assert.equal(aborted.headers.get("retry-after"), "1");
    assert.equal((await aborted.json()).error.code, "bridge_shutting_down");
    assert.equal(agent.aborted.length, 1);
    assert.ok(lines.includes("model bridge: 1 chat(s) still running after 200 ms; aborting them in the agent server"), lines.join("\n"));
});

test("41.7 shutdown waits for a finished continuation's lock to be deleted in the agent server", async () => {
    const { url, bridge } = await startWith();
    const m1 = user("first");
    const r1 = await (await chat(url, { messages: [m1] })).json();
    agent.deleteDelayMs = 300;
    assert.equal((await chat(url, { messages: [m1, r1.choices[0].message, user("second")] })).status, 200);
    await bridge.shutdown(100);
    assert.equal([...agent.sessions.values()].filter((s) => s.title.startsWith("bridge-l-")).length, 0);
});

test("41.9 the idle sweep deletes the bridge's sessions idle longer than BRIDGE_SESSION_IDLE_MS, not others, not locked or working ones", async () => {
    const { url, bridge } = await startWith({ sessionIdleMs: 1 });
    for (const t of ["a", "b"]) await chat(url, { messages: [user(t)] });
    agent.sessions.set("ses_human", { title: "a person's session", created: 0, updated: 0, prompts: [], messages: [], busy: false });
    agent.sessions.set("ses_working", { title: "bridge-c-" + "0".repeat(40), created: 0, updated: 0, prompts: [], messages: [], busy: true });
    assert.equal(await bridge.sweep(), 2);
    assert.deepEqual([...agent.sessions.keys()].sort(), ["ses_human", "ses_working"]);
});

test("the agent server's event stream: events cut anywhere between chunks or several to a chunk each arrive once, whole and in order; comments, bad JSON and a large event of a session nobody watches are passed over", async () => {
    const ev = (type: string, properties: unknown) => `data: ${JSON.stringify({ type, properties })}\n\n`;
    const big = (sid: string) => ev("message.part.updated", { sessionID: sid, part: { sessionID: sid, text: "x".repeat(70_000) } });
    const cut = (text: string) => Array.from(text);
    const chunks = [
        ev("server.connected", {}),
        ...cut(ev("message.updated", { sessionID: "ses_a", n: 1 }) + ": a comment\n\n" + 'data: {"type": "message.updated",\ndata: "properties": {"sessionID": "ses_a", "n": 2}}\n\n' + "data: {not json\n\n"),
        ...[big("ses_other").slice(0, 40_000), big("ses_other").slice(40_000)],
        big("ses_a").slice(0, 50_000), big("ses_a").slice(50_000, -1), "\n" + ev("message.updated", { sessionID: "ses_a", n: 3 }).slice(0, 10),
        ev("message.updated", { sessionID: "ses_a", n: 3 }).slice(10) + ev("message.updated", { sessionID: "ses_a", n: 4 }) + ev("message.updated", { sessionID: "ses_a", n: 5 }),
    ];
    const streams: http.ServerResponse[] = [];
    const server = http.createServer(async (req, res) => {
        res.writeHead(200, { "Content-Type": "text/event-stream" });
        streams.push(res);
        for (const c of chunks) {
            res.write(c);
            await sleep(1);
        }
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const agentServer = new AgentServer(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, "u", "p");
    const seen: AgentEvent[] = [];
    const watched: AgentEvent[] = [];
    agentServer.watchAll((e) => seen.push(e));
    agentServer.watch("ses_a", (e) => watched.push(e));
    try {
        await agentServer.connectEvents(AbortSignal.timeout(5000));
        const deadline = Date.now() + 10_000;
        while (seen.length < 6 && Date.now() < deadline) await sleep(20);
        await sleep(100);
        assert.deepEqual(seen.map((e) => [e.type, e.properties.sessionID, e.properties.n ?? e.properties.part?.text.length]), [
            ["server.connected", undefined, undefined],
            ["message.updated", "ses_a", 1],
            ["message.updated", "ses_a", 2],
            ["message.part.updated", "ses_a", 70_000],
            ["message.updated", "ses_a", 3],
            ["message.updated", "ses_a", 4],
            ["message.updated", "ses_a", 5],
        ]);
        assert.equal(watched.length, 6);
    } finally {
        agentServer.close();
        for (const r of streams) r.destroy();
        server.closeAllConnections();
        await new Promise((ok) => server.close(ok));
    }
});

test("helpers: leading echo, pieces by code point", () => {
    assert.equal(stripLeadingEcho("hello there\n\nHi!", "hello there"), "Hi!");
    assert.equal(stripLeadingEcho("hello there", "hello there"), "hello there");
    assert.deepEqual(pieces("a😀bc", 2), ["a😀", "bc"]);
});

test("42.6/42.7 main: a bad setting or keys file exits 2 naming it, without the password; a good start prints no secret", () => {
    const tsx = path.resolve(__dirname, "..", "..", "node_modules", "tsx", "dist", "cli.mjs");
    const main = path.resolve(__dirname, "..", "src", "main.ts");
    const secret = "Sup3rSecretPassw0rd";
    const run = (env: Record<string, string>) => spawnSync(process.execPath, [tsx, main], { env: { PATH: process.env.PATH!, OPENCODE_BASE: agent.url, DEFAULT_MODEL: "p/m", OPENCODE_SERVER_USERNAME: "agent", OPENCODE_SERVER_PASSWORD: secret, BRIDGE_CLIENT_KEYS_FILE: keysFile, BRIDGE_PORT: "1", ...env }, encoding: "utf8", timeout: 20_000 });
    let r = run({ OPENCODE_BASE: `http://agent:${secret}@127.0.0.1:4000` });
    assert.equal(r.status, 2, r.stderr);
    assert.match(r.stderr, /OPENCODE_BASE: http:\/\/\*\*\*@127\.0\.0\.1:4000 carries credentials/);
    assert.ok(!(r.stdout + r.stderr).includes(secret));
    r = run({ BRIDGE_CLIENT_KEYS_FILE: dir });
    assert.equal(r.status, 2);
    assert.match(r.stderr, /BRIDGE_CLIENT_KEYS_FILE .*is a directory/);
    assert.ok(!(r.stdout + r.stderr).includes(secret));
});
