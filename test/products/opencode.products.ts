/**
 * opencode from npm (tools/products/pins.ts) with the rendered configuration file and environment
 * of the dev stack's first agent server (section 4.1): GET /global/health answers 401 without
 * credentials and 200 with them, the file is accepted (GET /config returns it merged; a file with
 * a key opencode does not know is refused), the TCP probe the pod uses passes without
 * credentials, and opencode writes only to the pod's writable volumes (it runs as an unprivileged
 * user; the read-only mounts belong to root). Rewritten for this machine: container paths map
 * under a temporary root, --port becomes a free port and --hostname 127.0.0.1.
 */
import { test, before, after } from "node:test";
import * as assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { extractOpencode, loadDefinition } from "../../tools/products/definitions";
import { install, opencodeBinary } from "../../tools/products/install";
import { PRODUCTS } from "../../tools/products/pins";
import { agentServer } from "../../config/areas/agent";
import { find, renderStack } from "../render";
import { freePort } from "../backups/servers";
import { NOBODY, podEnv, podRoot, runnableCopy, type PodRoot } from "./pod";

const NS = "agent";
/** Section 4.1's health path (the stack config's agentServerHealthPath default). */
const HEALTH = agentServer.healthPath.default!;
let pod: PodRoot;
let child: ChildProcess | undefined;
let port = 0;
let auth = "";
let output = "";
let rendered: any;

async function get(p: string, headers: Record<string, string> = {}) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers });
    return { status: res.status, body: await res.text() };
}

function tcpConnects(p: number): Promise<boolean> {
    return new Promise((resolve) => {
        const s = net.connect({ host: "127.0.0.1", port: p, timeout: 1000 }, () => { s.destroy(); resolve(true); });
        s.on("error", () => resolve(false));
        s.on("timeout", () => { s.destroy(); resolve(false); });
    });
}

async function startOpencode(configText?: string): Promise<{ child: ChildProcess; port: number; root: PodRoot; out: () => string }> {
    const r = await renderStack("dev");
    const d = find(r, "Deployment", "agent-server-4000", NS);
    const spec = d.spec.template.spec;
    const c = spec.containers.find((x: any) => x.name === "server");
    const root = podRoot(r, spec, c, NS);
    if (configText !== undefined) {
        const file = root.at("/etc/agent-server/config.json");
        fs.chmodSync(path.dirname(file), 0o755);
        fs.writeFileSync(file, configText, { mode: 0o444 });
        fs.chmodSync(path.dirname(file), 0o555);
    }
    const mounts: string[] = c.volumeMounts.map((m: any) => m.mountPath);
    const env = podEnv(r, c, NS, (_name, value) => (mounts.some((m) => value === m || value.startsWith(`${m}/`)) ? root.at(value) : value));
    const p = await freePort();
    const args = [...c.args];
    args[args.indexOf("--port") + 1] = String(p);
    args[args.indexOf("--hostname") + 1] = "127.0.0.1";
    const bin = runnableCopy(opencodeBinary(), root.root);
    let out = "";
    const proc = spawn(bin, args, { cwd: root.at(c.workingDir), env: { PATH: process.env.PATH ?? "/usr/bin:/bin", ...env }, ...asUnprivileged(), stdio: ["ignore", "pipe", "pipe"] });
    proc.stdout!.on("data", (b) => (out += b));
    proc.stderr!.on("data", (b) => (out += b));
    const deadline = Date.now() + 60_000;
    while (!(await tcpConnects(p))) {
        if (proc.exitCode !== null || Date.now() > deadline) throw new Error(`opencode serve did not listen (exit ${proc.exitCode}): ${out.slice(-2000)}`);
        await new Promise((res) => setTimeout(res, 250));
    }
    rendered = { r, c, env };
    return { child: proc, port: p, root, out: () => out };
}

/** As root, run as nobody so the read-only mounts are really read-only to opencode; otherwise as the current user. */
const asUnprivileged = () => (process.getuid?.() === 0 ? { uid: NOBODY.uid, gid: NOBODY.gid } : {});

const stop = (c?: ChildProcess) => new Promise<void>((resolve) => {
    if (!c || c.exitCode !== null) return resolve();
    c.once("exit", () => resolve());
    c.kill("SIGTERM");
    setTimeout(() => c.kill("SIGKILL"), 10_000).unref();
});

before(async () => {
    install(PRODUCTS.opencode);
    const s = await startOpencode();
    child = s.child; port = s.port; pod = s.root;
    const { env } = rendered;
    auth = `Basic ${Buffer.from(`${env.OPENCODE_SERVER_USERNAME}:${env.OPENCODE_SERVER_PASSWORD}`).toString("base64")}`;
    output = "";
    s.child.stdout!.on("data", (b) => (output += b));
});

after(async () => {
    await stop(child);
    pod?.remove();
});

test(`opencode ${PRODUCTS.opencode.version}: the rendered environment turns basic authentication on (OPENCODE_SERVER_USERNAME/PASSWORD)`, () => {
    assert.ok(rendered.env.OPENCODE_SERVER_PASSWORD, "no OPENCODE_SERVER_PASSWORD in the rendered environment");
    assert.match(rendered.env.OPENCODE_SERVER_PASSWORD, /^[A-Za-z0-9]{16}$/);
});

test("GET /global/health: 401 without credentials, 401 with a wrong password, 200 {healthy: true} with them (section 4.1)", async () => {
    assert.equal((await get(HEALTH)).status, 401);
    assert.equal((await get(HEALTH, { Authorization: `Basic ${Buffer.from(`${rendered.env.OPENCODE_SERVER_USERNAME}:wrong-password`).toString("base64")}` })).status, 401);
    const ok = await get(HEALTH, { Authorization: auth });
    assert.equal(ok.status, 200, ok.body.slice(0, 300));
    const body = JSON.parse(ok.body);
    assert.equal(body.healthy, true);
    assert.equal(body.version, PRODUCTS.opencode.version);
});

test("the pod's probe (TCP on the http port, no credentials) passes while HTTP without credentials is 401", async () => {
    const probe = rendered.c.livenessProbe;
    assert.deepEqual(Object.keys(probe).filter((k) => ["tcpSocket", "httpGet", "exec"].includes(k)), ["tcpSocket"]);
    for (const p of [rendered.c.livenessProbe, rendered.c.readinessProbe, rendered.c.startupProbe]) {
        assert.equal(p.tcpSocket.port, "http");
        assert.ok(await tcpConnects(port));
    }
    assert.equal((await get(HEALTH)).status, 401);
});

test("opencode accepts the rendered configuration file: GET /config returns it merged", async () => {
    const file = JSON.parse(fs.readFileSync(pod.at("/etc/agent-server/config.json"), "utf8"));
    const res = await get("/config", { Authorization: auth });
    assert.equal(res.status, 200, res.body.slice(0, 500));
    const merged = JSON.parse(res.body);
    assert.equal(merged.model, file.model);
    assert.equal(merged.small_model, file.small_model);
    assert.deepEqual(Object.keys(merged.provider ?? {}).filter((k) => k in file.provider), Object.keys(file.provider));
    assert.ok(merged.agent?.maintainer, "the maintainer agent is missing from the merged configuration");
    assert.deepEqual(merged.permission?.["gateway-admin_*"], file.permission["gateway-admin_*"]);
    assert.ok(merged.mcp?.["gateway-admin"], "the gateway-admin tool server is missing");
    // Secrets stay references in the file opencode was given.
    assert.ok(!JSON.stringify(file).includes(rendered.env.MODEL_API_KEY));
});

test("opencode writes only to the writable volumes: its data and state folders exist there, the configuration file is untouched", async () => {
    await get("/session", { Authorization: auth });
    const env = rendered.env; // container paths already mapped under the pod root
    for (const name of ["XDG_DATA_HOME", "XDG_CONFIG_HOME", "XDG_STATE_HOME", "XDG_CACHE_HOME"]) {
        assert.ok(env[name].startsWith(pod.root), `${name} is not a pod path`);
        assert.ok(fs.existsSync(path.join(env[name], "opencode")), `no opencode folder under ${name}`);
    }
    const cfg = pod.at("/etc/agent-server");
    assert.deepEqual(fs.readdirSync(cfg), ["config.json"]);
    assert.doesNotMatch(output, /EACCES|EROFS|read-only file system/i);
});

test("a configuration file with a key opencode does not know is refused (so acceptance above means something)", async () => {
    const r = await renderStack("dev");
    const good = JSON.parse(find(r, "ConfigMap", "agent-server-config", NS).data["config.json"]);
    const s = await startOpencode(JSON.stringify({ ...good, wf_placeholder_setting: true }));
    try {
        const res = await fetch(`http://127.0.0.1:${s.port}/config`, { headers: { Authorization: auth } });
        const body = await res.text();
        assert.notEqual(res.status, 200, `opencode accepted an unknown key: ${body.slice(0, 200)}`);
        assert.match(body + s.out(), /wf_placeholder_setting|ConfigInvalid|Unrecognized/i);
    } finally {
        await stop(s.child);
        s.root.remove();
    }
});

test("the committed opencode definition (tools/products/definitions/opencode.json) is what the package says", async () => {
    const fresh = JSON.parse(JSON.stringify(await extractOpencode()));
    assert.deepEqual(fresh, loadDefinition("opencode"), "run: npx tsx tools/products/genDefinitions.ts");
});
