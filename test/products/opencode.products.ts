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
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { extractOpencode, loadDefinition } from "../../tools/products/definitions";
import { PRODUCTS } from "../../tools/products/pins";
import { agentServer } from "../../config/areas/agent";
import { find, renderStack } from "../render";
import { stop, tcpConnects, type PodRoot } from "./pod";
import { startOpencode, type Opencode } from "./opencodeServer";

const NS = "agent";
/** Section 4.1's health path (the stack config's agentServerHealthPath default). */
const HEALTH = agentServer.healthPath.default!;
let pod: PodRoot;
let server: Opencode | undefined;
let port = 0;
let auth = "";
let rendered: any;

async function get(p: string, headers: Record<string, string> = {}) {
    const res = await fetch(`http://127.0.0.1:${port}${p}`, { headers });
    return { status: res.status, body: await res.text() };
}

before(async () => {
    const r = await renderStack("dev");
    server = await startOpencode(r, "agent-server-4000", NS);
    ({ port, auth } = server);
    pod = server.root;
    rendered = { c: server.container, env: server.env };
});

after(async () => {
    await stop(server?.proc);
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
    assert.deepEqual(fs.readdirSync(cfg).sort(), ["config.json", "opencode"]);
    assert.deepEqual(fs.readdirSync(path.join(cfg, "opencode")), ["README"]);
    assert.doesNotMatch(server!.out(), /EACCES|EROFS|read-only file system/i);
});

/** Folders named node_modules under `dir` (opencode's installs land in one). */
function nodeModules(dir: string): string[] {
    const found: string[] = [];
    const walk = (d: string) => {
        for (const e of fs.readdirSync(d, { withFileTypes: true })) {
            if (!e.isDirectory()) continue;
            const p = path.join(d, e.name);
            if (e.name === "node_modules") found.push(p);
            else walk(p);
        }
    };
    walk(dir);
    return found;
}

/** An HTTP proxy on loopback that records the hosts it is asked for and serves none of them. */
async function recordingProxy(): Promise<{ url: string; hosts: string[]; close: () => Promise<void> }> {
    const hosts: string[] = [];
    const server = net.createServer((sock) => {
        sock.once("data", (b) => {
            const [, target] = /^(?:CONNECT|GET|POST|HEAD) (\S+)/.exec(b.toString("latin1")) ?? [];
            if (target) hosts.push(target.replace(/^https?:\/\//, "").split(/[/:]/)[0]);
            sock.end("HTTP/1.1 502 Bad Gateway\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        });
        sock.on("error", () => {});
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    return { url: `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`, hosts, close: () => new Promise((ok) => server.close(() => ok())) };
}

test("41.6 at start opencode installs nothing and fetches no model catalogue with the rendered switches; without them it does both (so the check means something)", { timeout: 240_000 }, async () => {
    const r = await renderStack("dev");
    const run = async (switches: boolean) => {
        const proxy = await recordingProxy();
        const s = await startOpencode(r, "agent-server-4000", NS, { env: (e) => {
            for (const k of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) e[k] = proxy.url;
            e.NO_PROXY = e.no_proxy = "127.0.0.1,localhost";
            if (!switches) {
                for (const k of ["OPENCODE_DISABLE_MODELS_FETCH", "OPENCODE_DISABLE_DEFAULT_PLUGINS", "OPENCODE_DISABLE_PROJECT_CONFIG"]) delete e[k];
                e.XDG_CONFIG_HOME = `${e.HOME}/.config`;
            }
        } });
        try {
            await fetch(`http://127.0.0.1:${s.port}/session`, { headers: { Authorization: auth } });
            const by = Date.now() + (switches ? 10_000 : 60_000);
            while (Date.now() < by && !(!switches && proxy.hosts.includes("models.dev") && proxy.hosts.includes("registry.npmjs.org"))) await new Promise((ok) => setTimeout(ok, 500));
            return { hosts: [...new Set(proxy.hosts)].sort(), modules: nodeModules(s.root.root).map((d) => path.relative(s.root.root, d)) };
        } finally {
            await stop(s.proc);
            s.root.remove();
            await proxy.close();
        }
    };
    const on = await run(true);
    const off = await run(false);
    console.log(`# with the rendered switches: outbound hosts ${JSON.stringify(on.hosts)}, node_modules ${JSON.stringify(on.modules)}; without: ${JSON.stringify(off.hosts)}, ${JSON.stringify(off.modules)}`);
    assert.deepEqual(on.hosts, [], "opencode went out at start");
    assert.deepEqual(on.modules, [], "opencode installed packages");
    assert.ok(off.hosts.includes("models.dev") && off.hosts.includes("registry.npmjs.org"), "without the switches opencode did not go out: the check above proves nothing");
});

test("a configuration file with a key opencode does not know is refused (so acceptance above means something)", async () => {
    const r = await renderStack("dev");
    const good = JSON.parse(find(r, "ConfigMap", "agent-server-config", NS).data["config.json"]);
    const s = await startOpencode(r, "agent-server-4000", NS, { config: () => ({ ...good, wf_placeholder_setting: true }) });
    try {
        const res = await fetch(`http://127.0.0.1:${s.port}/config`, { headers: { Authorization: auth } });
        const body = await res.text();
        assert.notEqual(res.status, 200, `opencode accepted an unknown key: ${body.slice(0, 200)}`);
        assert.match(body + s.out(), /wf_placeholder_setting|ConfigInvalid|Unrecognized/i);
    } finally {
        await stop(s.proc);
        s.root.remove();
    }
});

test("the committed opencode definition (tools/products/definitions/opencode.json) is what the package says", async () => {
    const fresh = JSON.parse(JSON.stringify(await extractOpencode()));
    assert.deepEqual(fresh, loadDefinition("opencode"), "run: npx tsx tools/products/genDefinitions.ts");
});
