/**
 * The model bridge (opencode-bridge) and the gateway admin tool server (sub2api-admin), run for
 * real with the dev stack's rendered configuration, when a copy of their sources is given:
 *   OPS_BRIDGE_SOURCE         a folder holding bridge/index.js and bridge/lib/ of
 *                             github.com/AaronYang0628/opencode-docker at the commit in
 *                             tools/products/definitions/opencode-bridge.json
 *   OPS_SUB2API_ADMIN_SOURCE  .opencode/mcp/sub2api-admin/server.mjs of github.com/AaronYang0628/docs
 *                             at the commit in tools/products/definitions/sub2api-admin.json
 * Both come from public repositories, not from a package registry, so CI has no copy: without a
 * variable its tests are skipped (counted as skipped, CI=true included). Neither needs an npm
 * package (they use Node.js built-ins only). Rewritten for this machine: ports become free ports on
 * 127.0.0.1 (the bridge binds 0.0.0.0 itself, so it runs with test/products/loopback.cjs), the
 * bridge's OPENCODE_BASE becomes the local opencode, the tool server's command the given file.
 *
 *   OPS_BRIDGE_SOURCE=... OPS_SUB2API_ADMIN_SOURCE=... npm run test:fetched-products
 */
import { test, after } from "node:test";
import * as assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import * as readline from "node:readline";
import { loadFetchedDefinition, processEnvReads } from "../../tools/products/fetchedDefinitions";
import { GATEWAY_MCP, GATEWAY_TOOLS } from "../../components/agentServerConfig";
import { find, renderStack } from "../render";
import { freePort } from "../backups/servers";
import { collect, listening, podEnv, stop, type PodRoot } from "./pod";
import { startOpencode, type Opencode, type OpencodeOptions } from "./opencodeServer";
import type { RenderResult } from "../../cli/harness/render";

const NS = "agent";
const BRIDGE_SRC = process.env.OPS_BRIDGE_SOURCE;
const ADMIN_SRC = process.env.OPS_SUB2API_ADMIN_SOURCE;
const bridgeDef = loadFetchedDefinition("opencode-bridge");
const adminDef = loadFetchedDefinition("sub2api-admin");
const LOOPBACK = path.join(__dirname, "loopback.cjs");

const bridgeSkip = BRIDGE_SRC && fs.existsSync(path.join(BRIDGE_SRC, "bridge", "index.js"))
    ? false
    : `OPS_BRIDGE_SOURCE is ${BRIDGE_SRC ? `${BRIDGE_SRC}, which has no bridge/index.js` : "not set"}: give a copy of ${bridgeDef.source.repository} at ${bridgeDef.source.commit} (fetched sources never run in CI)`;
const adminSkip = ADMIN_SRC && fs.existsSync(ADMIN_SRC)
    ? false
    : `OPS_SUB2API_ADMIN_SOURCE is ${ADMIN_SRC ? `${ADMIN_SRC}, which does not exist` : "not set"}: give ${adminDef.source.path} of ${adminDef.source.repository} at ${adminDef.source.commit} (fetched sources never run in CI)`;

const running: ChildProcess[] = [];
const roots: PodRoot[] = [];
after(async () => {
    await Promise.all(running.map(stop));
    for (const r of roots) r.remove();
});

async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
    const deadline = Date.now() + ms;
    for (;;) {
        const v = await probe();
        if (v !== undefined) return v;
        if (Date.now() > deadline) throw new Error(`${what}: not within ${ms / 1000} s`);
        await new Promise((res) => setTimeout(res, 500));
    }
}

/** The agent server instance the bridge forwards to, as opencode-products runs it. */
async function startAgentServer(r: RenderResult, instance: string, opts: OpencodeOptions = {}): Promise<Opencode> {
    const oc = await startOpencode(r, instance, NS, opts);
    running.push(oc.proc);
    roots.push(oc.root);
    return oc;
}

interface Bridge { port: number; env: Record<string, string>; out: () => string }

/** opencode-bridge with the rendered environment; BRIDGE_PORT and OPENCODE_BASE rewritten for this machine. */
async function startBridge(r: RenderResult, opencodePort: number): Promise<Bridge> {
    const c = find(r, "Deployment", "model-bridge", NS).spec.template.spec.containers[0];
    const env = podEnv(r, c, NS);
    const port = await freePort();
    const local = { ...env, BRIDGE_PORT: String(port), OPENCODE_BASE: `http://127.0.0.1:${opencodePort}` };
    const proc = spawn(process.execPath, ["--require", LOOPBACK, path.join(BRIDGE_SRC!, "bridge", "index.js")], {
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...local },
        stdio: ["ignore", "pipe", "pipe"],
    });
    running.push(proc);
    const out = collect(proc);
    await listening(proc, port, "opencode-bridge", out);
    return { port, env, out };
}

/** The agent server instance named by the bridge's rendered OPENCODE_BASE (http://<service>.<namespace>.svc...:<port>). */
function bridgeTarget(r: RenderResult): string {
    const c = find(r, "Deployment", "model-bridge", NS).spec.template.spec.containers[0];
    return new URL(c.env.find((e: any) => e.name === "OPENCODE_BASE").value).hostname.split(".")[0];
}

async function http(port: number, p: string, init: RequestInit = {}) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, init);
    return { status: res.status, body: await res.text() };
}

test("opencode-bridge: its sources read exactly the recorded environment names", { skip: bridgeSkip }, () => {
    const dir = path.join(BRIDGE_SRC!, "bridge");
    const files = [path.join(dir, "index.js"), ...fs.readdirSync(path.join(dir, "lib")).map((f) => path.join(dir, "lib", f))];
    const names = processEnvReads(files.map((f) => fs.readFileSync(f, "utf8")).join("\n"));
    assert.deepEqual(names, Object.keys(bridgeDef.env).sort());
});

test("opencode-bridge in front of the agent server: /v1/models lists DEFAULT_MODEL, /health names OPENCODE_BASE; with basic authentication on, what it forwards is refused (401)", { skip: bridgeSkip }, async () => {
    const r = await renderStack("dev");
    const oc = await startAgentServer(r, bridgeTarget(r));
    const b = await startBridge(r, oc.port);
    const models = await http(b.port, "/v1/models");
    assert.equal(models.status, 200, models.body);
    assert.deepEqual(JSON.parse(models.body), { object: "list", data: [{ id: b.env.DEFAULT_MODEL, object: "model", created: 0, owned_by: "opencode-bridge" }] });
    const health = JSON.parse((await http(b.port, "/health")).body);
    assert.deepEqual(health, { status: "ok", sessions: 0, opencode: `http://127.0.0.1:${oc.port}` });
    // The rendered settings reached it (its start banner prints them).
    assert.match(b.out(), new RegExp(`Stream ChunkSize: ${b.env.OPENAI_STREAM_CHUNK_SIZE}\\n`));
    assert.match(b.out(), new RegExp(`Stream ChunkDelay: ${b.env.OPENAI_STREAM_CHUNK_DELAY_MS}ms`));
    // It sends no credentials: opencode refuses its event stream and its session creation.
    await until("the bridge's event stream to be refused", async () => (/\[event-bus\] connect failed HTTP 401/.test(b.out()) ? true : undefined));
    const chat = await http(b.port, "/v1/chat/completions", { method: "POST", headers: { "Content-Type": "application/json" }, body: JSON.stringify({ model: b.env.DEFAULT_MODEL, messages: [{ role: "user", content: "ping" }] }) });
    assert.equal(chat.status, 500, chat.body);
    assert.match(JSON.parse(chat.body).error.message, /^HTTP 401/);
});

test("opencode-bridge reaches the agent server when the agent server accepts it: event stream connected, sessions listed through the bridge", { skip: bridgeSkip }, async () => {
    const r = await renderStack("dev");
    const oc = await startAgentServer(r, bridgeTarget(r), { withoutPassword: true });
    const created = JSON.parse((await http(oc.port, "/session", { method: "POST", headers: { "Content-Type": "application/json" }, body: "{}" })).body);
    assert.match(created.id, /^ses_/);
    const b = await startBridge(r, oc.port);
    await until("the bridge's event stream to connect", async () => (/\[event-bus\] connected to OpenCode \/event/.test(b.out()) ? true : undefined));
    const sessions = JSON.parse((await http(b.port, "/sessions")).body);
    assert.ok(sessions.sessions.some((s: any) => s.id === created.id), JSON.stringify(sessions).slice(0, 500));
});

/** A stdio JSON-RPC client of an MCP server. */
function mcpClient(command: string[], env: Record<string, string>) {
    const proc = spawn(command[0], command.slice(1), { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, stdio: ["pipe", "pipe", "pipe"] });
    running.push(proc);
    let stderr = "";
    proc.stderr!.on("data", (b) => (stderr += b));
    const pending = new Map<number, (m: any) => void>();
    readline.createInterface({ input: proc.stdout! }).on("line", (line) => {
        const m = JSON.parse(line);
        pending.get(m.id)?.(m);
        pending.delete(m.id);
    });
    let id = 0;
    const call = (method: string, params: unknown = {}) => new Promise<any>((resolve, reject) => {
        const i = ++id;
        const timer = setTimeout(() => reject(new Error(`${method}: no answer in 10 s (stderr: ${stderr.slice(-500)})`)), 10_000);
        pending.set(i, (m) => { clearTimeout(timer); resolve(m); });
        proc.stdin!.write(`${JSON.stringify({ jsonrpc: "2.0", id: i, method, params })}\n`);
    });
    return { proc, call, stderr: () => stderr };
}

/** The tool server's command and environment as the agent server starts it: {env:NAME} substituted from the agent server's own environment. */
function renderedToolServer(r: RenderResult): { command: string[]; env: Record<string, string> } {
    const mcp = JSON.parse(find(r, "ConfigMap", "agent-server-config", NS).data["config.json"]).mcp[GATEWAY_MCP];
    const server = find(r, "Deployment", bridgeTarget(r), NS).spec.template.spec.containers.find((c: any) => c.name === "server");
    const agentEnv = podEnv(r, server, NS);
    const env = Object.fromEntries(Object.entries<string>(mcp.environment).map(([k, v]) => [k, v.replace(/\{env:([A-Za-z_][A-Za-z0-9_]*)\}/g, (_m, n) => agentEnv[n] ?? "")]));
    assert.equal(mcp.command[0], "node");
    assert.match(mcp.command[1], /server\.mjs$/);
    return { command: [process.execPath, ADMIN_SRC!], env };
}

test("sub2api-admin: its source reads exactly the recorded environment names", { skip: adminSkip }, () => {
    assert.deepEqual(processEnvReads(fs.readFileSync(ADMIN_SRC!, "utf8")), Object.keys(adminDef.env).sort());
});

test("sub2api-admin starts with the rendered environment and lists its nine tools over stdio JSON-RPC; local checks refuse what section 7 lists", { skip: adminSkip }, async () => {
    const r = await renderStack("dev");
    const { command, env } = renderedToolServer(r);
    const s = mcpClient(command, env);
    const init = await s.call("initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "ops-products", version: "0" } });
    assert.equal(init.result.serverInfo.name, "sub2api-72602-admin");
    const tools = (await s.call("tools/list")).result.tools.map((t: any) => t.name);
    assert.deepEqual(tools, [...GATEWAY_TOOLS]);
    const describe = (await s.call("tools/call", { name: "describe", arguments: {} })).result;
    assert.notEqual(describe.isError, true, JSON.stringify(describe));
    const refused = async (name: string, args: unknown, message: RegExp) => {
        const res = (await s.call("tools/call", { name, arguments: args })).result;
        assert.equal(res.isError, true, `${name} was not refused: ${JSON.stringify(res)}`);
        assert.match(res.content[0].text, message);
    };
    await refused("preview_recharge", { email: "a@example.com", amount: Number(env.SUB2API_MAX_RECHARGE) + 1 }, new RegExp(`maximum of ${env.SUB2API_MAX_RECHARGE}`));
    await refused("read", { path: "/api/v1/admin/settings/smtp" }, /not in the reviewed read allowlist/);
    await refused("read", { path: "/api/v1/admin/users/../settings" }, /dot segments/);
    assert.equal(s.proc.exitCode, null, s.stderr());
});

test("sub2api-admin reads SUB2API_MAX_RECHARGE (an override of gatewayToolMaxRecharge changes its cap)", { skip: adminSkip }, async () => {
    const r = await renderStack("dev", { gatewayToolMaxRecharge: 500 });
    const { command, env } = renderedToolServer(r);
    assert.equal(env.SUB2API_MAX_RECHARGE, "500");
    const s = mcpClient(command, env);
    const res = (await s.call("tools/call", { name: "preview_recharge", arguments: { email: "a@example.com", amount: 501 } })).result;
    assert.equal(res.isError, true);
    assert.match(res.content[0].text, /maximum of 500/);
});

test("sub2api-admin exits at once with the specification's GATEWAY_* names (SUB2API_BASE_URL is required)", { skip: adminSkip }, async () => {
    const r = await renderStack("dev");
    const { command, env } = renderedToolServer(r);
    const renamed = Object.fromEntries(Object.entries(env).map(([k, v]) => [k.replace(/^SUB2API_/, "GATEWAY_"), v]));
    const proc = spawn(command[0], command.slice(1), { env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...renamed }, stdio: ["pipe", "pipe", "pipe"] });
    running.push(proc);
    const out = collect(proc);
    const code = await new Promise<number | null>((resolve) => proc.once("exit", (c) => resolve(c)));
    assert.notEqual(code, 0);
    assert.match(out(), /SUB2API_BASE_URL is required/);
});

test("the agent server (opencode) starts sub2api-admin from the rendered configuration: GET /mcp reports it connected", { skip: adminSkip }, async () => {
    const r = await renderStack("dev");
    const { command } = renderedToolServer(r);
    const oc = await startAgentServer(r, bridgeTarget(r), { config: (c) => ({ ...c, mcp: { ...c.mcp, [GATEWAY_MCP]: { ...c.mcp[GATEWAY_MCP], command } } }) });
    const status = await until("opencode's tool server status", async () => {
        const res = await http(oc.port, "/mcp", { headers: { Authorization: oc.auth } });
        const body = res.status === 200 ? JSON.parse(res.body) : undefined;
        return body?.[GATEWAY_MCP]?.status && body[GATEWAY_MCP].status !== "pending" ? body[GATEWAY_MCP] : undefined;
    });
    assert.equal(status.status, "connected", `${JSON.stringify(status)}\n${oc.out().slice(-1500)}`);
});
