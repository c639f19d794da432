/**
 * Credentials in a URL are secrets (issue 30): the agent server's outbound proxy with a user and
 * password is never written in plain text (manifests.yaml, resources.json, an env literal). The
 * URL in the stack file carries no password; the credentials are a secret key of their own, and
 * the proxy variables come from a Secret.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import * as s from "../config/schema";
import { containersOf, find, renderStack } from "./render";

const VALID: Record<string, unknown> = Object.fromEntries(
    s.flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder]),
);
VALID.gatewayToolAdminApiKey = `admin-${"ab12".repeat(16)}`;

test("a proxy URL with a user and password in plain text is refused, naming the secret key to use", () => {
    for (const proxy of ["http://user:pass@proxy.example.com:3128", "http://token@proxy.example.com:3128"]) {
        try {
            loadConfig(mapSource("ops", "test", { ...VALID, agentServerHttpProxy: proxy }));
            assert.fail(`accepted ${proxy}`);
        } catch (err) {
            assert.ok(err instanceof ConfigError, String(err));
            assert.match(err.message, /ops:agentServerHttpProxy: the URL carries credentials in plain text \(value not shown\); expected a proxy URL without user or password: set them with `pulumi config set --secret agentServerHttpProxyCredentials <user>:<password>`/);
            assert.doesNotMatch(err.message, /pass@|token@/);
        }
    }
});

test("proxy credentials go into a Secret: no plain text in manifests.yaml or resources.json, the proxy variables come from the Secret", async () => {
    const password = "s3cr3t-proxy-pw-7731";
    const r = await renderStack("dev", { agentServerHttpProxy: "http://proxy.example.com:3128", agentServerHttpProxyCredentials: `ops-user:${password}` });
    assert.deepEqual(r.errors, []);
    assert.ok(!r.manifests.includes(password), "the password is in manifests.yaml");
    assert.ok(!r.resourcesJson.includes(password), "the password is in resources.json");
    const deployment = find(r, "Deployment", "agent-server-4000", "agent");
    const env = containersOf(deployment).find((c) => c.name === "server").env as Array<{ name: string; value?: string; valueFrom?: any }>;
    for (const name of ["HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"]) {
        const v = env.find((e) => e.name === name);
        assert.ok(v, name);
        assert.equal(v.value, undefined, `${name} is a literal`);
        assert.deepEqual(v.valueFrom, { secretKeyRef: { name: "agent-server-proxy", key: "url" } });
    }
    const secret = find(r, "Secret", "agent-server-proxy", "agent");
    assert.ok(secret, "the proxy Secret");
});

test("a proxy without credentials stays a plain value", async () => {
    const r = await renderStack("dev", { agentServerHttpProxy: "http://proxy.example.com:3128" });
    const deployment = find(r, "Deployment", "agent-server-4000", "agent");
    const env = containersOf(deployment).find((c) => c.name === "server").env as Array<{ name: string; value?: string }>;
    assert.equal(env.find((e) => e.name === "HTTP_PROXY")?.value, "http://proxy.example.com:3128");
});
