/**
 * The model bridge end to end (issue 27): opencode from npm with the dev stack's rendered agent
 * server settings (its provider pointed at a fake OpenAI-compatible API that counts calls), and
 * bridge/ compiled and started with the rendered bridge environment (the agent server's Secret and
 * the bridge's generated client key). Rewritten for this machine: ports become free ports on
 * 127.0.0.1, OPENCODE_BASE the local opencode, agentServerProviderBaseUrl the fake API.
 */
import { test, before, after } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { PRODUCTS, productDir } from "../../tools/products/pins";
import { containerfileStart } from "../../tools/images/recipes";
import { find, renderStack } from "../render";
import { stop } from "./pod";
import { startOpencode, type Opencode } from "./opencodeServer";
import { startBridge, type RunningBridge } from "./bridgeServer";
import { startFakeModelApi, SLOW_MARKER, type FakeModelApi } from "./fakeModelApi";
import { sseEvents } from "../../bridge/test/sse";

const NS = "agent";
let upstream: FakeModelApi;
let agent: Opencode;
let bridges: RunningBridge[] = [];
let env: Record<string, string>;

before(async () => {
    upstream = await startFakeModelApi();
    const r = await renderStack("dev", { agentServerProviderBaseUrl: upstream.baseUrl });
    assert.deepEqual(r.errors, []);
    const instance = new URL(find(r, "Deployment", "model-bridge", NS).spec.template.spec.containers[0].env.find((e: any) => e.name === "OPENCODE_BASE").value).hostname.split(".")[0];
    agent = await startOpencode(r, instance, NS);
    bridges = [await startBridge(r, agent.port), await startBridge(r, agent.port)];
    env = bridges[0].env;
});

after(async () => {
    for (const b of bridges) {
        await stop(b.proc);
        b.root.remove();
    }
    await stop(agent?.proc);
    agent?.root.remove();
    await upstream?.close();
});

const base = (i = 0) => `http://127.0.0.1:${bridges[i].port}`;
const chat = (body: unknown, opts: { key?: string | null; bridge?: number; signal?: AbortSignal } = {}) =>
    fetch(`${base(opts.bridge)}/v1/chat/completions`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(opts.key === null ? {} : { Authorization: `Bearer ${opts.key ?? bridges[0].key}` }) },
        body: JSON.stringify(body),
        signal: opts.signal,
    });
const sleep = (ms: number) => new Promise((ok) => setTimeout(ok, ms));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** Upstream calls made during `fn`, with what it returned. */
async function counting<T>(fn: () => Promise<T>): Promise<{ value: T; calls: number; first: number }> {
    const first = upstream.calls.length;
    const value = await fn();
    return { value, calls: upstream.calls.length - first, first };
}

test(`opencode ${PRODUCTS.opencode.version} behind the bridge: non-streamed chat answers 200 with the upstream's text, in exactly one upstream call (also 10 s later)`, async () => {
    const { value: body, calls, first } = await counting(async () => {
        const res = await chat({ model: env.DEFAULT_MODEL, messages: [{ role: "user", content: "say hello" }] });
        const text = await res.text();
        assert.equal(res.status, 200, text.slice(0, 500) + bridges[0].out().slice(-2000));
        return JSON.parse(text);
    });
    assert.equal(calls, 1, `upstream calls: ${calls}`);
    assert.equal(body.choices[0].message.content, upstream.calls[first].text);
    await sleep(10_000);
    assert.equal(upstream.calls.length - first, 1, `upstream calls 10 s later: ${upstream.calls.length - first}`);
    console.log(`# upstream calls for one non-streamed chat: ${calls}; 10 s later: ${upstream.calls.length - first}`);
});

test("streamed chat: the upstream's text in pieces of OPENAI_STREAM_CHUNK_SIZE characters, OPENAI_STREAM_CHUNK_DELAY_MS apart, then [DONE]; one upstream call (also 10 s later)", async () => {
    const size = Number(env.OPENAI_STREAM_CHUNK_SIZE);
    const delay = Number(env.OPENAI_STREAM_CHUNK_DELAY_MS);
    const first = upstream.calls.length;
    const res = await chat({ messages: [{ role: "user", content: "stream please" }], stream: true });
    assert.equal(res.status, 200);
    const events = await sseEvents(res);
    assert.equal(events.at(-1)!.data, "[DONE]");
    const chunks = events.slice(0, -1).map((e) => JSON.parse(e.data));
    const content = chunks.map((c) => c.choices[0].delta.content).filter((x) => x);
    assert.equal(upstream.calls.length - first, 1);
    assert.equal(content.join(""), upstream.calls[first].text);
    assert.ok(content.slice(0, -1).every((p) => Array.from(p as string).length === size), `piece lengths ${content.map((p) => p.length).join(",")}`);
    assert.ok(Array.from(content.at(-1) as string).length <= size);
    const times = events.filter((_e, k) => k < chunks.length && chunks[k].choices[0].delta.content).map((e) => e.t);
    const gaps = times.slice(1).map((t, k) => t - times[k]);
    assert.ok(median(gaps) >= delay - 2, `median gap ${median(gaps).toFixed(1)} ms; expected about ${delay}`);
    // Receive times, not send times: under load two pieces can reach the client together (a gap
    // near 0 after a late one), so the pacing is judged on the median and the lower quartile.
    const lowerQuartile = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 4)];
    assert.ok(lowerQuartile >= delay / 2, `lower-quartile gap ${lowerQuartile.toFixed(1)} ms; expected about ${delay}`);
    console.log(`# stream: ${content.length} pieces of ${size} characters; gaps median ${median(gaps).toFixed(1)} ms, min ${Math.min(...gaps).toFixed(1)} ms, max ${Math.max(...gaps).toFixed(1)} ms (configured ${delay} ms)`);
    await sleep(10_000);
    assert.equal(upstream.calls.length - first, 1, "10 s later");
    console.log(`# upstream calls for one streamed chat: 1; 10 s later: ${upstream.calls.length - first}`);
});

test("401 with an OpenAI error object without a key and with a wrong key; the agent server is still 401 to anonymous callers", async () => {
    for (const key of [null, "sk-wrong"]) {
        const res = await chat({ messages: [{ role: "user", content: "x" }] }, { key });
        assert.equal(res.status, 401);
        assert.equal((await res.json()).error.code, "invalid_api_key");
    }
    for (const p of ["/session", "/global/health", "/event"]) {
        const res = await fetch(`http://127.0.0.1:${agent.port}${p}`);
        assert.equal(res.status, 401, p);
        await res.body?.cancel();
    }
    assert.equal((await fetch(`${base()}/ready`)).status, 200, "the bridge itself is admitted");
});

test("100 sequential and 10 concurrent chats are all answered, one upstream call each; the bridge is still running", async () => {
    const first = upstream.calls.length;
    for (let i = 0; i < 100; i++) {
        const res = await chat({ messages: [{ role: "user", content: `sequential ${i}` }] });
        const text = await res.text();
        assert.equal(res.status, 200, `chat ${i}: ${text}`);
        assert.equal(JSON.parse(text).choices[0].message.content, upstream.calls.at(-1)!.text);
    }
    const results = await Promise.all(Array.from({ length: 10 }, (_x, i) => chat({ messages: [{ role: "user", content: `concurrent ${i}` }] }, { bridge: i % 2 }).then(async (r) => ({ status: r.status, body: await r.json() }))));
    for (const r of results) assert.equal(r.status, 200, JSON.stringify(r.body));
    assert.equal(new Set(results.map((r) => r.body.choices[0].message.content)).size, 10);
    assert.equal(upstream.calls.length - first, 110);
    for (const [i, b] of bridges.entries()) {
        assert.equal(b.proc.exitCode, null, `bridge ${i} exited`);
        assert.equal((await fetch(`${base(i)}/health`)).status, 200);
    }
    console.log(`# 110 chats (100 sequential, 10 concurrent over two replicas): ${upstream.calls.length - first} upstream calls`);
});

test("a client that goes away stops the session's work: the bridge aborts the session, the agent server closes its upstream call", async () => {
    const ctl = new AbortController();
    const first = upstream.calls.length;
    const p = chat({ messages: [{ role: "user", content: `${SLOW_MARKER}: count slowly` }], stream: true }, { signal: ctl.signal }).then((r) => r.text()).catch(() => "aborted");
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
    assert.match(bridges[0].out(), /session ses_\w+ aborted \(aborted\)/, "the bridge did not abort the session");
    assert.equal(call.ended, false);
    const status = await (await fetch(`http://127.0.0.1:${agent.port}/session/status`, { headers: { Authorization: agent.auth } })).json();
    assert.ok(Object.values(status).every((s: any) => s.type === "idle"), `sessions still working: ${JSON.stringify(status)}`);
    await sleep(3000);
    assert.equal(upstream.calls.length, first + 1, "the agent server called the model again");
});

test("two bridge replicas continue one conversation: the second turn (on the other replica) reaches the same session, whose model call sees the first turn", async () => {
    const first = upstream.calls.length;
    const m1 = { role: "user", content: "remember the word pelican" };
    const r1 = await (await chat({ messages: [m1] }, { bridge: 0 })).json();
    const r2res = await chat({ messages: [m1, r1.choices[0].message, { role: "user", content: "which word?" }] }, { bridge: 1 });
    assert.equal(r2res.status, 200);
    const r2 = await r2res.json();
    assert.equal(upstream.calls.length - first, 2);
    assert.equal(r2.choices[0].message.content, upstream.calls[first + 1].text);
    const seen = JSON.stringify(upstream.calls[first + 1].body.messages);
    assert.ok(seen.includes("remember the word pelican") && seen.includes(upstream.calls[first].text), "the second model call does not carry the first turn");
    // One session holds both turns (not a transcript in a new session).
    const sessions = await (await fetch(`http://127.0.0.1:${agent.port}/session?limit=1000`, { headers: { Authorization: agent.auth } })).json();
    let holding = 0;
    for (const s of sessions) {
        const msgs = await (await fetch(`http://127.0.0.1:${agent.port}/session/${s.id}/message`, { headers: { Authorization: agent.auth } })).json();
        const texts = JSON.stringify(msgs);
        if (texts.includes("remember the word pelican")) {
            holding++;
            assert.ok(texts.includes("which word?"));
            assert.equal(msgs.filter((m: any) => m.info.role === "user").length, 2);
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
