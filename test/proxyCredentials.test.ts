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
            assert.match(err.message, /ops:agentServerHttpProxy: the URL carries a user or password \(value not shown\); expected a proxy URL without user or password: set them with `pulumi config set --secret agentServerHttpProxyCredentials <user>:<password>`/);
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

test("no URL key takes credentials in plain text: model API, identity provider, gateway, object store, chart repositories", () => {
    const urls: Record<string, string> = {
        agentServerProviderBaseUrl: "https://key:sk-live-123@api.example.com/v1",
        agentServerOauthProxyIssuerUrl: "https://admin:pw@id.example.com/realms/ops",
        searchEngineSnapshotS3Endpoint: "http://minio:minio-secret@object-store.data.svc.cluster.local:9000",
        gitopsChatUiRepo: "https://user:ghp_token123@charts.example.com",
    };
    for (const [key, value] of Object.entries(urls)) {
        try {
            loadConfig(mapSource("ops", "test", { ...VALID, [key]: value }));
            assert.fail(`accepted ${key}`);
        } catch (err) {
            assert.ok(err instanceof ConfigError, String(err));
            assert.match(err.message, new RegExp(`ops:${key}: the URL carries a user or password \\(value not shown\\)`), key);
            assert.doesNotMatch(err.message, /sk-live-123|:pw@|minio-secret|ghp_token123/);
        }
    }
});

test("a mirror URL with a token is refused (https, or a password in an SSH URL), never written to the mirror's config", () => {
    for (const repo of ["https://x-access-token:ghp_abc@github.com/org/repo.git", "ssh://git:ghp_abc@github.com/org/repo.git"]) {
        try {
            loadConfig(mapSource("ops", "test", { ...VALID, backupsGitMirrorRepositories: [repo] }));
            assert.fail(`accepted ${repo}`);
        } catch (err) {
            assert.ok(err instanceof ConfigError, String(err));
            assert.match(err.message, /ops:backupsGitMirrorRepositories: item 0/);
        }
    }
});
