/**
 * The model bridge and the gateway admin tool server get exactly the settings the real programs
 * read: the bridge is this repository's bridge/ (the names its settings module reads), which keeps
 * the names of the seed's opencode-bridge for the specification's settings (checked against the
 * list recorded from opencode-bridge's source); the tool server's names are in the list recorded
 * from its source (tools/products/definitions/sub2api-admin.json, with the repository, file and
 * commit it was read from).
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { loadFetchedDefinition } from "../tools/products/fetchedDefinitions";
import { GATEWAY_MCP, GATEWAY_TOOLS } from "../components/agentServerConfig";
import { find, renderStack } from "./render";
import { ENV_NAMES } from "../bridge/src/settings";

const bridge = loadFetchedDefinition("opencode-bridge");
const admin = loadFetchedDefinition("sub2api-admin");

test("each recorded list names its source: repository, file and a full commit", () => {
    for (const d of [bridge, admin]) {
        assert.match(d.source.repository, /^github\.com\/AaronYang0628\//);
        assert.match(d.source.commit, /^[0-9a-f]{40}$/);
        assert.ok(d.source.path.length > 0);
    }
    // The names the specification writes are not the programs' own.
    for (const placeholder of ["PORT", "BRIDGE_SETTINGS", "UPSTREAM_API_KEY"]) assert.ok(!(placeholder in bridge.env), placeholder);
    for (const placeholder of ["GATEWAY_BASE_URL", "GATEWAY_ALLOWED_HOST", "GATEWAY_TIMEOUT_MS", "GATEWAY_MAX_RECHARGE", "GATEWAY_ADMIN_API_KEY"]) assert.ok(!(placeholder in admin.env), placeholder);
});

for (const stack of ["dev", "prod", "ci"]) {
    test(`${stack}: the bridge's environment is what bridge/ reads, with section 2.8's four settings under opencode-bridge's names, and it forwards to an agent server`, async () => {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
        const names: string[] = c.env.map((e: any) => e.name);
        const read: string[] = Object.values(ENV_NAMES);
        // NODE_OPTIONS is Node.js's own (its heap within the pod's memory limit, components/bridge.ts).
        assert.deepEqual(names.filter((n) => !read.includes(n) && n !== "NODE_OPTIONS"), [], "names bridge/src/settings.ts does not read");
        assert.match(c.env.find((e: any) => e.name === "NODE_OPTIONS").value, /^--max-old-space-size=\d+ --max-semi-space-size=\d+$/);
        for (const n of ["DEFAULT_MODEL", "OPENAI_STREAM_CHUNK_SIZE", "OPENAI_STREAM_CHUNK_DELAY_MS", "ENABLE_LEADING_ECHO_FILTER", "BRIDGE_PORT", "OPENCODE_BASE"]) {
            assert.ok(names.includes(n), n);
            assert.ok(n in bridge.env, `${n}: not a name of opencode-bridge (the configuration and docs keep its names)`);
        }
        const value = (n: string) => c.env.find((e: any) => e.name === n).value;
        assert.equal(Number(value("BRIDGE_PORT")), c.ports[0].containerPort);
        // The bridge parses OPENCODE_BASE with new URL() and speaks plain http (port || 80).
        const base = new URL(value("OPENCODE_BASE"));
        assert.equal(base.protocol, "http:");
        assert.ok(base.port, "an explicit port: the bridge's default is 80");
        const [service, namespace] = base.hostname.split(".");
        const svc = find(r, "Service", service, namespace);
        assert.ok(svc.spec.ports.some((p: any) => p.port === Number(base.port)), `${service} publishes ${base.port}`);
        assert.match(value("ENABLE_LEADING_ECHO_FILTER"), /^(true|false)$/);
        if (stack !== "ci") assert.deepEqual([c.livenessProbe.httpGet.path, c.readinessProbe.httpGet.path], ["/health", "/ready"], "the routes bridge/src/server.ts answers");
    });

    test(`${stack}: the tool server's environment in the agent configuration is sub2api-admin's own, and it starts with it`, async () => {
        const r = await renderStack(stack);
        const config = JSON.parse(find(r, "ConfigMap", "agent-server-config", "agent").data["config.json"]);
        const env: Record<string, string> = config.mcp[GATEWAY_MCP].environment;
        assert.deepEqual(Object.keys(env).filter((n) => !(n in admin.env)), [], "names sub2api-admin does not read");
        // What server.mjs checks at start: a http(s) SUB2API_BASE_URL whose host is SUB2API_ALLOWED_HOST.
        const url = new URL(env.SUB2API_BASE_URL);
        assert.ok(["http:", "https:"].includes(url.protocol));
        assert.equal(url.hostname, env.SUB2API_ALLOWED_HOST);
        assert.ok(Number.isInteger(Number(env.SUB2API_TIMEOUT_MS)) && Number(env.SUB2API_TIMEOUT_MS) > 0);
        assert.ok(Number(env.SUB2API_MAX_RECHARGE) > 0);
        // The admin key is substituted by the agent server from its own environment, fed by the Secret.
        const ref = /^\{env:([A-Z0-9_]+)\}$/.exec(env.SUB2API_ADMIN_API_KEY);
        assert.ok(ref, "the admin key is a reference, never a value");
        const server = find(r, "Deployment", "agent-server-4000", "agent").spec.template.spec.containers[0];
        assert.ok(server.env.find((e: any) => e.name === ref![1])?.valueFrom?.secretKeyRef);
    });
}

test("the nine tools of section 2.9 are the tools sub2api-admin lists", () => {
    assert.deepEqual([...GATEWAY_TOOLS].sort(), [...admin.tools!].sort());
    assert.equal(admin.tools!.length, 9);
});
