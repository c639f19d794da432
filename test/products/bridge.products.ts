/**
 * The model bridge end to end (issues 27 and 41): opencode from npm with the dev stack's rendered
 * agent server settings (its provider pointed at a fake OpenAI-compatible API that counts calls and
 * can be slow, fail or call tools: fakeModelApi.ts), and bridge/ compiled and started with the
 * rendered bridge environment (the agent server's Secret and the bridge's generated client key).
 * The client is the official OpenAI SDK for Node from npm (the product cache), as an application
 * drives it; raw fetch only where the SDK hides what is checked (headers, exact bodies).
 * Rewritten for this machine: ports become free ports on 127.0.0.1, OPENCODE_BASE the local
 * opencode, agentServerProviderBaseUrl the fake API. OPS_BRIDGE_DIR runs the same tests against
 * another bridge folder (the figures before a change).
 */
import { test, before, after } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { PRODUCTS, packageDir, productDir } from "../../tools/products/pins";
import { install } from "../../tools/products/install";
import { containerfileStart } from "../../tools/images/recipes";
import { find, renderStack } from "../render";
import { stop } from "./pod";
import { startOpencode, type Opencode } from "./opencodeServer";
import { startBridge, type RunningBridge } from "./bridgeServer";
import { startFakeModelApi, SLOW_MARKER, type FakeModelApi } from "./fakeModelApi";
import { sseEvents } from "../../bridge/test/sse";
import type { RenderResult } from "../../cli/harness/render";

const NS = "agent";
let upstream: FakeModelApi;
let agent: Opencode;
let rendered: RenderResult;
let bridges: RunningBridge[] = [];
const extra: RunningBridge[] = [];
let env: Record<string, string>;
let OpenAI: any;

before(async () => {
    install(PRODUCTS.openaiSdk);
    const sdk = require(packageDir(PRODUCTS.openaiSdk));
    OpenAI = sdk.OpenAI ?? sdk.default;
    upstream = await startFakeModelApi();
    rendered = await renderStack("dev", { agentServerProviderBaseUrl: upstream.baseUrl });
    assert.deepEqual(rendered.errors, []);
    const instance = new URL(find(rendered, "Deployment", "model-bridge", NS).spec.template.spec.containers[0].env.find((e: any) => e.name === "OPENCODE_BASE").value).hostname.split(".")[0];
    agent = await startOpencode(rendered, instance, NS);
    bridges = [await startBridge(rendered, agent.port), await startBridge(rendered, agent.port)];
    env = bridges[0].env;
});

after(async () => {
    for (const b of [...bridges, ...extra]) {
        await stop(b.proc);
        b.root.remove();
    }
    await stop(agent?.proc);
    agent?.root.remove();
    await upstream?.close();
});

const base = (i = 0, b = bridges) => `http://127.0.0.1:${b[i].port}`;
/** The official SDK against bridge `i` (its defaults, unless `opts` says otherwise). */
const client = (opts: Record<string, unknown> = {}, b: RunningBridge = bridges[0]) => new OpenAI({ apiKey: b.key, baseURL: `http://127.0.0.1:${b.port}/v1`, ...opts });
const chat = (body: unknown, opts: { key?: string | null; bridge?: number; signal?: AbortSignal } = {}) =>
    fetch(`${base(opts.bridge)}/v1/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(opts.key === null ? {} : { Authorization: `Bearer ${opts.key ?? bridges[0].key}` }) },
        body: JSON.stringify(body),
        signal: opts.signal,
    });
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const user = (content: string) => ({ role: "user", content });
const callsSince = (first: number) => upstream.calls.slice(first);
/** The text of every message the model was sent in a call. */
const seenBy = (c: { body: any }) => JSON.stringify(c.body.messages);
const agentGet = async (p: string) => (await fetch(`http://127.0.0.1:${agent.port}${p}`, { headers: { Authorization: agent.auth } })).json();

/** The SDK's error of a call (or a failure when it succeeds), with how long the call took. */
async function failing(fn: () => Promise<unknown>): Promise<{ err: any; seconds: number }> {
    const t = performance.now();
    try {
        await fn();
    } catch (err) {
        return { err, seconds: (performance.now() - t) / 1000 };
    }
    assert.fail("the call succeeded");
}

test(`opencode ${PRODUCTS.opencode.version} behind the bridge, the OpenAI SDK ${PRODUCTS.openaiSdk.version} as client: a chat answers with the upstream's text in exactly one upstream call (also 10 s later)`, async () => {
    const first = upstream.calls.length;
    const r = await client().chat.completions.create({ model: env.DEFAULT_MODEL, messages: [user("say hello")] });
    assert.equal(callsSince(first).length, 1);
    assert.equal(r.choices[0].message.content, upstream.calls[first].text);
    assert.equal(r.object, "chat.completion");
    assert.deepEqual(r.usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 });
    await sleep(10_000);
    assert.equal(callsSince(first).length, 1, "10 s later");
});

test("401 with an OpenAI error object without a key and with a wrong key; the agent server is still 401 to anonymous callers", async () => {
    for (const key of [null, "sk-wrong"]) {
        const res = await chat({ messages: [user("x")] }, { key });
        assert.equal(res.status, 401);
        assert.equal((await res.json()).error.code, "invalid_api_key");
    }
    const { err } = await failing(() => client({ apiKey: "sk-wrong" }).chat.completions.create({ messages: [user("x")] }));
    assert.equal(err.status, 401);
    for (const p of ["/session", "/global/health", "/event"]) {
        const res = await fetch(`http://127.0.0.1:${agent.port}${p}`);
        assert.equal(res.status, 401, p);
        await res.body?.cancel();
    }
    assert.equal((await fetch(`${base()}/ready`)).status, 200, "the bridge itself is admitted");
});

// ---- 41.1: upstream failures reach the client as they are, at once, and no model call follows ----

test("41.1 a model 429 with Retry-After reaches the SDK as 429 with that Retry-After, in seconds, after one model call and none later", { timeout: 120_000 }, async () => {
    const first = upstream.calls.length;
    const { err, seconds } = await failing(() => client({ maxRetries: 0, timeout: 30_000 }).chat.completions.create({ messages: [user("count [fake:status=429] [fake:retry-after=7]")] }));
    assert.equal(err.status, 429, err.message);
    assert.equal(err.headers?.get?.("retry-after") ?? err.headers?.["retry-after"], "7");
    assert.match(err.message, /Rate limit reached/);
    assert.ok(seconds < 5, `${seconds.toFixed(1)} s`);
    await sleep(9000);
    assert.equal(callsSince(first).length, 1, "model calls after the answer (opencode would retry after 7 s)");
    console.log(`# 429 upstream: 429 with Retry-After 7 after ${seconds.toFixed(2)} s; model calls: 1, 9 s later: ${callsSince(first).length}`);
});

test("41.1 a model 503 and a refused model key (401) reach the SDK as 502 with the model API's message, in seconds, one model call each; with the SDK's own retries too", { timeout: 120_000 }, async () => {
    for (const [status, cause] of [[503, /the fake upstream failed with 503/], [401, /Incorrect API key provided/]] as const) {
        const first = upstream.calls.length;
        const { err, seconds } = await failing(() => client({ maxRetries: 0, timeout: 30_000 }).chat.completions.create({ messages: [user(`count [fake:status=${status}]`)] }));
        assert.equal(err.status, 502, err.message);
        assert.match(err.message, cause);
        assert.ok(seconds < 5, `${status}: ${seconds.toFixed(1)} s`);
        await sleep(3000);
        assert.equal(callsSince(first).length, 1, `${status}: model calls`);
        console.log(`# ${status} upstream: 502 after ${seconds.toFixed(2)} s, model calls: ${callsSince(first).length}`);
    }
    // The SDK's default retries (2): three attempts, each one model call; a refused key is not retried (x-should-retry: false).
    let first = upstream.calls.length;
    let r = await failing(() => client({ timeout: 60_000 }).chat.completions.create({ messages: [user("count [fake:status=503]")] }));
    assert.equal(r.err.status, 502);
    assert.ok(r.seconds < 15, `${r.seconds.toFixed(1)} s`);
    assert.equal(callsSince(first).length, 3);
    console.log(`# 503 upstream with the SDK's default retries: ${r.seconds.toFixed(1)} s, ${callsSince(first).length} model calls`);
    first = upstream.calls.length;
    r = await failing(() => client({ timeout: 60_000 }).chat.completions.create({ messages: [user("count [fake:status=401]")] }));
    assert.equal(r.err.status, 502);
    assert.equal(callsSince(first).length, 1, "a refused key is not retried");
});

// ---- 41.2: a conversation belongs to one client and one history ----

test("41.2 two end users behind one key with the same system prompt and greeting, continuing at once, never see each other's text (with and without `user`)", { timeout: 120_000 }, async () => {
    for (const named of [true, false]) {
        const sys = { role: "system", content: "You are the bank's assistant." };
        const hi = user("hi [fake:same]");
        const who = (u: string) => (named ? { user: u } : {});
        const [a1, b1] = await Promise.all(["alice", "bob"].map((u) => client().chat.completions.create({ messages: [sys, hi], ...who(u) })));
        assert.equal(a1.choices[0].message.content, b1.choices[0].message.content, "the same first exchange");
        const first = upstream.calls.length;
        const accounts = { alice: "account 1111-alice", bob: "account 2222-bob" };
        const answers = await Promise.all((["alice", "bob"] as const).map((u) =>
            client().chat.completions.create({ messages: [sys, hi, { role: "assistant", content: a1.choices[0].message.content }, user(`my ${accounts[u]}`)], ...who(u) })));
        const calls = callsSince(first);
        assert.equal(calls.length, 2);
        for (const c of calls) {
            const seen = seenBy(c);
            assert.ok(seen.includes(accounts.alice) !== seen.includes(accounts.bob), `one model call carried both users' text: ${seen.slice(0, 600)}`);
        }
        for (const [i, u] of (["alice", "bob"] as const).entries()) {
            const mine = calls.find((c) => seenBy(c).includes(accounts[u]))!;
            assert.equal(answers[i].choices[0].message.content, mine.text, `${u} got another call's answer`);
        }
        // Each user's next turn again carries only their own text.
        const next = upstream.calls.length;
        await Promise.all((["alice", "bob"] as const).map((u, i) =>
            client().chat.completions.create({ messages: [sys, hi, { role: "assistant", content: a1.choices[0].message.content }, user(`my ${accounts[u]}`), { role: "assistant", content: answers[i].choices[0].message.content }, user("what is my account?")], ...who(u) })));
        for (const c of callsSince(next)) assert.ok(seenBy(c).includes(accounts.alice) !== seenBy(c).includes(accounts.bob), "a later turn mixed the users");
    }
});

test("41.2 five concurrent continuations of one conversation over two replicas are serialised: each model call carries its own question only, each answer is its own call's", { timeout: 120_000 }, async () => {
    const m1 = user("remember the word pelican");
    const r1 = await client().chat.completions.create({ messages: [m1] });
    const history = [m1, { role: "assistant", content: r1.choices[0].message.content }];
    const first = upstream.calls.length;
    const t = performance.now();
    const answers = await Promise.all([0, 1, 2, 3, 4].map((i) => client({}, bridges[i % 2]).chat.completions.create({ messages: [...history, user(`question ${i} ${i === 0 ? SLOW_MARKER + " [fake:words=5]" : ""}`)] })));
    const seconds = (performance.now() - t) / 1000;
    const calls = callsSince(first);
    assert.equal(calls.length, 5);
    for (const c of calls) {
        const asked = [0, 1, 2, 3, 4].filter((i) => seenBy(c).includes(`question ${i}`));
        assert.equal(asked.length, 1, `a model call carried questions ${asked.join(", ")}`);
        assert.ok(seenBy(c).includes("pelican"), "the history is in every call");
    }
    for (const [i, a] of answers.entries()) {
        const mine = calls.find((c) => seenBy(c).includes(`question ${i}`))!;
        assert.equal(a.choices[0].message.content, mine.text.trimEnd());
    }
    console.log(`# 5 concurrent continuations of one conversation: 5 model calls, each with its own question, in ${seconds.toFixed(1)} s`);
});

// ---- 41.3: a failed turn leaves the session as it was ----

test("41.3 a turn that fails (the model API's 503, or the SDK's own time-out) and is retried by the SDK reaches the model with the question once", { timeout: 180_000 }, async () => {
    for (const [how, marker, opts] of [["a 503", "[fake:fail-once]", { timeout: 60_000 }], ["the SDK's 3 s time-out", "[fake:slow-once]", { timeout: 3000 }]] as const) {
        const m1 = user(`first question (${how})`);
        const r1 = await client().chat.completions.create({ messages: [m1] });
        const q = user(`second question ${marker}`);
        const first = upstream.calls.length;
        const r2 = await client(opts).chat.completions.create({ messages: [m1, { role: "assistant", content: r1.choices[0].message.content }, q] });
        const calls = callsSince(first);
        assert.equal(calls.length, 2, `${how}: one failed call, one retried`);
        const last = calls[1];
        assert.equal(r2.choices[0].message.content, last.text.trimEnd());
        const times = seenBy(last).split("second question").length - 1;
        console.log(`# ${how}, retried by the SDK: the model saw the question ${times} time(s)`);
        assert.equal(times, 1, `${how}: the model saw the question ${times} times`);
        assert.equal(seenBy(last).split("first question").length - 1, 1);
    }
});

// ---- 41.4: streaming is streaming ----

test("41.4 a streamed answer's first piece reaches the SDK within 100 ms of the upstream's first token; pieces keep the configured size and spacing; the usage chunk when asked", { timeout: 120_000 }, async () => {
    const size = Number(env.OPENAI_STREAM_CHUNK_SIZE);
    const delay = Number(env.OPENAI_STREAM_CHUNK_DELAY_MS);
    const added: number[] = [];
    for (let i = 0; i < 5; i++) {
        const first = upstream.calls.length;
        // The first answer is the 4,000 characters; the others are shorter (the time to the first piece is what they measure).
        const stream = await client().chat.completions.create({ messages: [user(`long answer ${i} [fake:chars=${i === 0 ? 4000 : 400}] [fake:first-ms=1500]`)], stream: true, stream_options: { include_usage: true } });
        const pieces: { t: number; text: string }[] = [];
        let usage;
        let finish;
        for await (const c of stream) {
            if (c.usage) usage = c.usage;
            if (c.choices[0]?.finish_reason) finish = c.choices[0].finish_reason;
            const text = c.choices[0]?.delta?.content;
            if (text) pieces.push({ t: performance.now(), text });
        }
        const call = upstream.calls[first];
        added.push(pieces[0].t - call.firstTokenAt!);
        assert.equal(pieces.map((p) => p.text).join(""), call.text.trimEnd());
        assert.equal(finish, "stop");
        assert.deepEqual(usage, { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 });
        assert.ok(pieces.every((p) => Array.from(p.text).length <= size), "a piece larger than OPENAI_STREAM_CHUNK_SIZE");
        const gaps = pieces.slice(1).map((p, k) => p.t - pieces[k].t);
        assert.ok(median(gaps) >= delay - 2, `median gap ${median(gaps).toFixed(1)} ms; at least ${delay} expected`);
        if (i === 0) console.log(`# stream of ${call.text.length} characters: ${pieces.length} pieces of at most ${size}, gaps median ${median(gaps).toFixed(1)} ms (configured ${delay}), ${((pieces.at(-1)!.t - pieces[0].t) / 1000).toFixed(1)} s from the first piece to the last`);
    }
    console.log(`# time to the first streamed piece after the upstream's first token: median ${median(added).toFixed(0)} ms, max ${Math.max(...added).toFixed(0)} ms (5 streams)`);
    assert.ok(median(added) < 100, `median ${median(added).toFixed(0)} ms added`);
});

test("41.4 streamed with raw SSE: role chunk, content pieces, stop, [DONE]; a non-streamed answer is the same text", async () => {
    const res = await chat({ messages: [user("stream please")], stream: true });
    assert.equal(res.status, 200);
    assert.match(res.headers.get("content-type")!, /^text\/event-stream/);
    const events = await sseEvents(res);
    assert.equal(events.at(-1)!.data, "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    assert.deepEqual(chunks[0].choices[0].delta, { role: "assistant", content: "" });
    assert.equal(chunks.at(-1).choices[0].finish_reason, "stop");
    assert.equal(chunks.map((c) => c.choices[0].delta.content ?? "").join(""), upstream.calls.at(-1)!.text);
});

// ---- 41.5: every field honoured or refused ----

test("41.5 fields the bridge cannot honour are refused with 400 naming them; response_format json_schema and json_object are honoured", async () => {
    const c = client({ maxRetries: 0 });
    const refused: [string, Record<string, unknown>][] = [
        ["tools", { tools: [{ type: "function", function: { name: "get_weather", parameters: { type: "object", properties: {} } } }] }],
        ["n", { n: 2 }],
        ["max_tokens", { max_tokens: 5 }],
        ["max_completion_tokens", { max_completion_tokens: 5 }],
        ["stop", { stop: ["\n"] }],
        ["temperature", { temperature: 0.2 }],
        ["seed", { seed: 7 }],
        ["logprobs", { logprobs: true }],
        ["frobnicate", { frobnicate: 1 }],
    ];
    const first = upstream.calls.length;
    for (const [field, extraBody] of refused) {
        const { err } = await failing(() => c.chat.completions.create({ messages: [user("x")], ...extraBody }));
        assert.equal(err.status, 400, `${field}: ${err.message}`);
        assert.equal(err.param ?? err.error?.param, field, field);
        assert.match(err.message, new RegExp(field));
    }
    assert.equal(callsSince(first).length, 0, "a refused request reached the model");
    for (const accepted of [{ temperature: 1 }, { n: 1 }, { user: "u-1" }, { stream: false }]) {
        const r = await c.chat.completions.create({ messages: [user("x")], ...accepted });
        assert.equal(typeof r.choices[0].message.content, "string", JSON.stringify(accepted));
    }
    const schema = { type: "object", properties: { reply: { type: "number" }, ok: { type: "boolean" } }, required: ["reply", "ok"], additionalProperties: false };
    const structured = await c.chat.completions.create({ messages: [user("answer as JSON")], response_format: { type: "json_schema", json_schema: { name: "answer", schema, strict: true } } });
    const parsed = JSON.parse(structured.choices[0].message.content);
    assert.equal(parsed.ok, true);
    assert.equal(typeof parsed.reply, "number");
    const obj = await c.chat.completions.create({ messages: [user("answer as a JSON object")], response_format: { type: "json_object" } });
    assert.equal(typeof JSON.parse(obj.choices[0].message.content), "object");
});

// ---- 41.6: a chat cannot run a shell or wait on a human ----

test("41.6 a chat whose model calls bash does not run it; one whose model asks a question is not left waiting", { timeout: 120_000 }, async () => {
    const marker = path.join(agent.root.at("/workspace"), `shell-ran-${Date.now()}`);
    const args = JSON.stringify({ command: `touch ${marker}`, description: "make a file" });
    const first = upstream.calls.length;
    const r = await client({ timeout: 60_000 }).chat.completions.create({ messages: [user(`run it [fake:tool=bash ${args}]`)] });
    assert.equal(fs.existsSync(marker), false, "the shell ran");
    assert.match(r.choices[0].message.content, /tool said: .*(denied|not available|unavailable|invalid|rule|prevents)/i);
    assert.equal(callsSince(first).length, 2, "the tool's refusal went back to the model once");
    const q = JSON.stringify({ questions: [{ question: "Which one?", header: "Pick", options: [{ label: "a", description: "a" }] }] });
    const t = performance.now();
    const r2 = await client({ timeout: 60_000 }).chat.completions.create({ messages: [user(`ask me [fake:tool=question ${q}]`)] });
    const seconds = (performance.now() - t) / 1000;
    assert.ok(seconds < 10, `${seconds.toFixed(1)} s`);
    assert.match(r2.choices[0].message.content, /tool said:/);
    console.log(`# bash asked for by the model: not run; a question asked for: answered in ${seconds.toFixed(1)} s`);
});

// ---- 41.7: rollouts ----

test("41.7 SIGTERM during a 32 s stream (longer than the 25 s the bridge used to allow): the stream completes, new chats are refused, the bridge exits 0 once it is done", { timeout: 180_000 }, async () => {
    const b = await startBridge(rendered, agent.port);
    extra.push(b);
    const first = upstream.calls.length;
    const streamRes = await fetch(`http://127.0.0.1:${b.port}/v1/chat/completions`, { method: "POST", headers: { Authorization: `Bearer ${b.key}`, "Content-Type": "application/json" }, body: JSON.stringify({ messages: [user(`${SLOW_MARKER} [fake:words=160] once more`)], stream: true }) });
    assert.equal(streamRes.status, 200);
    const reading = streamRes.text();
    const deadline = Date.now() + 30_000;
    while (upstream.calls.length === first && Date.now() < deadline) await sleep(100);
    await sleep(1000);
    const t = performance.now();
    const exited = new Promise<number | null>((ok) => b.proc.once("exit", (code) => ok(code)));
    b.proc.kill("SIGTERM");
    await sleep(300);
    const during = await fetch(`http://127.0.0.1:${b.port}/v1/chat/completions`, { method: "POST", headers: { Authorization: `Bearer ${b.key}`, "Content-Type": "application/json" }, body: JSON.stringify({ messages: [user("new")] }) }).then((r) => r.status, () => "refused");
    assert.ok(during === 503 || during === "refused", `a new chat during the drain: ${during}`);
    const text = await reading;
    const content = text.split("\n\n").filter((e) => e.startsWith("data: {")).map((e) => JSON.parse(e.slice(6)).choices?.[0]?.delta?.content ?? "").join("");
    assert.match(content, /word0 word1 [\s\S]* word159$/, "the stream did not complete");
    assert.match(text, /data: \[DONE\]\n\n$/);
    assert.equal(await exited, 0);
    console.log(`# SIGTERM 1 s into a 32 s stream: the stream completed ${((performance.now() - t) / 1000).toFixed(1)} s later, a new chat got ${during}, exit 0`);
});

test("41.7 SIGTERM with a chat longer than the drain allows: the chat is aborted in opencode (its model call closed, its turn taken out), the client gets 503", { timeout: 120_000 }, async () => {
    const b = await startBridge(rendered, agent.port, NS, { BRIDGE_UPSTREAM_TIMEOUT_MS: "4000" });
    extra.push(b);
    const first = upstream.calls.length;
    const pending = fetch(`http://127.0.0.1:${b.port}/v1/chat/completions`, { method: "POST", headers: { Authorization: `Bearer ${b.key}`, "Content-Type": "application/json" }, body: JSON.stringify({ messages: [user(`${SLOW_MARKER} never ends`)] }) });
    const deadline = Date.now() + 30_000;
    while (upstream.calls.length === first && Date.now() < deadline) await sleep(100);
    const exited = new Promise<number | null>((ok) => b.proc.once("exit", (code) => ok(code)));
    b.proc.kill("SIGTERM");
    const res = await pending;
    assert.ok([503, 504].includes(res.status), `status ${res.status}`);
    assert.equal(await exited, 0);
    const call = upstream.calls[first];
    const by = Date.now() + 10_000;
    while (!call.closedEarly && Date.now() < by) await sleep(100);
    assert.equal(call.closedEarly, true, "the model call kept running");
    const status = await agentGet("/session/status");
    assert.ok(Object.values(status).every((s: any) => s.type === "idle"), JSON.stringify(status));
});

// ---- 41.8: request size within the memory limit ----

test("41.8 five and ten concurrent large requests: the bridge stays within its memory limit (dev 128Mi, prod 256Mi); a body over BRIDGE_REQUEST_MEMORY_BYTES is 413, more than fit at once 503, never a crash", { timeout: 300_000 }, async () => {
    const prod = await renderStack("prod", { agentServerProviderBaseUrl: upstream.baseUrl });
    const prodEnv = find(prod, "Deployment", "model-bridge", NS).spec.template.spec.containers[0].env;
    const prodValue = (name: string) => prodEnv.find((e: any) => e.name === name).value;
    const cases: { stack: string; limitMiB: number; overrides: Record<string, string>; mb: number[] }[] = [
        { stack: "dev", limitMiB: 128, overrides: {}, mb: [7.9, 3.9] },
        { stack: "prod", limitMiB: 256, overrides: { NODE_OPTIONS: prodValue("NODE_OPTIONS"), BRIDGE_REQUEST_MEMORY_BYTES: prodValue("BRIDGE_REQUEST_MEMORY_BYTES") }, mb: [10.3] },
    ];
    for (const c of cases) {
        const b = await startBridge(rendered, agent.port, NS, c.overrides);
        extra.push(b);
        for (const mb of c.mb) {
            const big = "a".repeat(mb * 1024 * 1024);
            for (const n of [5, 10]) {
                const statuses = await Promise.all(Array.from({ length: n }, (_x, i) =>
                    fetch(`http://127.0.0.1:${b.port}/v1/chat/completions`, { method: "POST", headers: { Authorization: `Bearer ${b.key}`, "Content-Type": "application/json" }, body: JSON.stringify({ messages: [user(`${i} ${big}`)] }) }).then(async (r) => {
                        await r.arrayBuffer();
                        return r.status;
                    })));
                const hwm = Number(/VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${b.proc.pid}/status`, "utf8"))![1]) / 1024;
                console.log(`# ${c.stack} (limit ${c.limitMiB} MiB, BRIDGE_REQUEST_MEMORY_BYTES ${b.env.BRIDGE_REQUEST_MEMORY_BYTES}): ${n} concurrent ${mb} MB requests: ${JSON.stringify(statuses)}; peak resident ${hwm.toFixed(0)} MiB`);
                assert.ok(statuses.every((x) => [200, 413, 503].includes(x)), JSON.stringify(statuses));
                if (mb * 1024 * 1024 > Number(b.env.BRIDGE_REQUEST_MEMORY_BYTES)) assert.ok(statuses.every((x) => x === 413));
                else assert.ok(statuses.includes(200));
                assert.ok(hwm < c.limitMiB, `peak ${hwm.toFixed(0)} MiB`);
                assert.equal(b.proc.exitCode, null);
            }
        }
        await stop(b.proc);
    }
});

// ---- 41.9: idle sessions deleted ----

test("41.9 a conversation's sessions are deleted after BRIDGE_SESSION_IDLE_MS", { timeout: 120_000 }, async () => {
    const b = await startBridge(rendered, agent.port, NS, { BRIDGE_SESSION_IDLE_MS: "3000" });
    extra.push(b);
    const c = client({}, b);
    for (let i = 0; i < 20; i++) await c.chat.completions.create({ messages: [user(`idle ${i}`)] });
    const before = (await agentGet("/session?limit=100000")).filter((s: any) => s.title.startsWith("bridge-")).length;
    const deadline = Date.now() + 20_000;
    let left = before;
    while (left > 0 && Date.now() < deadline) {
        await sleep(1000);
        left = (await agentGet("/session?limit=100000")).filter((s: any) => s.title.startsWith("bridge-")).length;
    }
    console.log(`# bridge sessions: ${before} after 20 chats, ${left} after the idle time (3 s)`);
    assert.equal(left, 0);
    await stop(b.proc);
});

// ---- the earlier round's checks ----

test("100 sequential and 10 concurrent chats are all answered, one upstream call each; the bridge is still running", async () => {
    const first = upstream.calls.length;
    const c = client();
    for (let i = 0; i < 100; i++) {
        const r = await c.chat.completions.create({ messages: [user(`sequential ${i}`)] });
        assert.equal(r.choices[0].message.content, upstream.calls.at(-1)!.text);
    }
    const results = await Promise.all(Array.from({ length: 10 }, (_x, i) => client({}, bridges[i % 2]).chat.completions.create({ messages: [user(`concurrent ${i}`)] })));
    assert.equal(new Set(results.map((r: any) => r.choices[0].message.content)).size, 10);
    assert.equal(upstream.calls.length - first, 110);
    for (const [i, b] of bridges.entries()) {
        assert.equal(b.proc.exitCode, null, `bridge ${i} exited`);
        assert.equal((await fetch(`${base(i)}/health`)).status, 200);
    }
});

test("a client that goes away stops the session's work: the bridge aborts the turn, the agent server closes its upstream call", async () => {
    const ctl = new AbortController();
    const first = upstream.calls.length;
    const p = client().chat.completions.create({ messages: [user(`${SLOW_MARKER}: count slowly`)], stream: true }, { signal: ctl.signal }).then(async (s: any) => { for await (const _c of s) { /* reading */ } }).catch(() => "aborted");
    const deadline = Date.now() + 30_000;
    while (upstream.calls.length === first && Date.now() < deadline) await sleep(100);
    assert.equal(upstream.calls.length, first + 1, "the upstream call did not start");
    await sleep(1000);
    ctl.abort();
    await p;
    const call = upstream.calls[first];
    const stopBy = Date.now() + 10_000;
    while (!call.closedEarly && Date.now() < stopBy) await sleep(100);
    assert.equal(call.closedEarly, true, "the upstream call was not closed by the agent server");
    assert.equal(call.ended, false);
    const status = await agentGet("/session/status");
    assert.ok(Object.values(status).every((s: any) => s.type === "idle"), `sessions still working: ${JSON.stringify(status)}`);
    await sleep(3000);
    assert.equal(upstream.calls.length, first + 1, "the agent server called the model again");
});

test("two bridge replicas continue one conversation: the second turn (on the other replica) reaches the same session, whose model call sees the first turn", async () => {
    const first = upstream.calls.length;
    const m1 = user("remember the word albatross");
    const r1 = await client({}, bridges[0]).chat.completions.create({ messages: [m1] });
    const r2 = await client({}, bridges[1]).chat.completions.create({ messages: [m1, r1.choices[0].message, user("which word?")] });
    assert.equal(upstream.calls.length - first, 2);
    assert.equal(r2.choices[0].message.content, upstream.calls[first + 1].text);
    const seen = seenBy(upstream.calls[first + 1]);
    assert.ok(seen.includes("remember the word albatross") && seen.includes(upstream.calls[first].text), "the second model call does not carry the first turn");
    const sessions = await agentGet("/session?limit=100000");
    let holding = 0;
    for (const s of sessions) {
        const texts = JSON.stringify(await agentGet(`/session/${s.id}/message`));
        if (texts.includes("remember the word albatross")) {
            holding++;
            assert.ok(texts.includes("which word?"));
        }
    }
    assert.equal(holding, 1);
});

test("the agent server recipe's opencode SHA-512 is the npm integrity of the opencode-linux-x64 this test ran", () => {
    const lock = JSON.parse(fs.readFileSync(path.join(productDir(PRODUCTS.opencode), "package-lock.json"), "utf8"));
    const entry = lock.packages["node_modules/opencode-linux-x64"];
    assert.equal(entry.version, PRODUCTS.opencode.version);
    const hex = Buffer.from(entry.integrity.replace(/^sha512-/, ""), "base64").toString("hex");
    assert.equal(containerfileStart("images/agent-server/Containerfile").args.OPENCODE_SHA512, hex);
});
