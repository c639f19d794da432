/**
 * The agent server's OAuth proxy sidecar: oauth2-proxy built from the Go module proxy at the image's
 * version (tools/products/pins.ts), run with the dev stack's rendered arguments and environment
 * (agentServerOauthProxyEnabled=true, client id and secret set; the cookie secret is the rendered
 * Secret's generated value): it answers its liveness and readiness probe paths (read from the
 * render) and sends a browser without a session to the identity provider's authorization endpoint
 * of the configured issuer, with the rendered client id and a callback on the host the ingress
 * forwarded (--reverse-proxy). Rewritten for this machine: --oidc-issuer-url points at a fake OIDC
 * issuer on loopback (a node server with the same path, serving only the discovery document, which
 * oauth2-proxy reads at start), --http-address becomes 127.0.0.1 and a free port, --upstream a free
 * loopback port (nothing needs to answer there before a login).
 */
import * as assert from "node:assert/strict";
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import { after, before, test } from "node:test";
import { GO_PRODUCTS, goBinary } from "../../tools/products/pins";
import { freePort } from "../backups/servers";
import { find, renderStack } from "../render";
import { suiteNeeding } from "../skip";
import { podEnv } from "./pod";

const NS = "agent";
const PIN = GO_PRODUCTS.oauth2Proxy;
const CLIENT_ID = "ops-agent-server";
const OVERRIDES = { agentServerOauthProxyEnabled: true, agentServerOauthProxyClientId: CLIENT_ID, agentServerOauthProxyClientSecret: "render-client-secret" };
const missing = fs.existsSync(goBinary(PIN)) ? undefined : `oauth2-proxy ${PIN.release} is not in ${goBinary(PIN)} (build it with: npx tsx tools/products/install.ts oauth2Proxy)`;

suiteNeeding(`oauth2-proxy ${PIN.release} as the agent server's OAuth proxy sidecar`, () => {
    let issuerServer: http.Server;
    let issuer = "";
    let proxy: ChildProcess | undefined;
    let out = "";
    let port = 0;
    let container: any;
    let host = "";
    const discoveryHits: string[] = [];

    before(async () => {
        const r = await renderStack("dev", OVERRIDES);
        container = find(r, "Deployment", "agent-server-4000", NS).spec.template.spec.containers.find((c: any) => c.name === "oauth-proxy");
        const rendered = Object.fromEntries(container.args.map((a: string) => a.replace(/^--/, "").split(/=(.*)/s).slice(0, 2)));
        const issuerPath = new URL(rendered["oidc-issuer-url"]).pathname.replace(/\/$/, "");
        host = find(r, "Ingress", "agent-server-4000", NS).spec.rules[0].host;

        const issuerPort = await freePort();
        issuer = `http://127.0.0.1:${issuerPort}${issuerPath}`;
        issuerServer = http.createServer((req, res) => {
            discoveryHits.push(req.url ?? "");
            if (req.url === `${issuerPath}/.well-known/openid-configuration`) {
                res.writeHead(200, { "content-type": "application/json" });
                res.end(JSON.stringify({
                    issuer,
                    authorization_endpoint: `${issuer}/protocol/openid-connect/auth`,
                    token_endpoint: `${issuer}/protocol/openid-connect/token`,
                    jwks_uri: `${issuer}/protocol/openid-connect/certs`,
                    userinfo_endpoint: `${issuer}/protocol/openid-connect/userinfo`,
                    response_types_supported: ["code"],
                    subject_types_supported: ["public"],
                    id_token_signing_alg_values_supported: ["RS256"],
                }));
            } else {
                res.writeHead(404);
                res.end();
            }
        });
        await new Promise<void>((resolve) => issuerServer.listen(issuerPort, "127.0.0.1", resolve));

        port = await freePort();
        const upstream = await freePort();
        const args = container.args.map((a: string) => {
            if (a.startsWith("--oidc-issuer-url=")) return `--oidc-issuer-url=${issuer}`;
            if (a.startsWith("--http-address=")) return `--http-address=127.0.0.1:${port}`;
            if (a.startsWith("--upstream=")) return `--upstream=${a.slice("--upstream=".length).replace(/:\d+\//, `:${upstream}/`)}`;
            return a;
        });
        const env = podEnv(r, container, NS);
        proxy = spawn(goBinary(PIN), args, { env: { PATH: "/usr/bin:/bin", ...env }, stdio: ["ignore", "pipe", "pipe"] });
        proxy.stdout!.on("data", (b) => (out += b));
        proxy.stderr!.on("data", (b) => (out += b));
        const ping = container.livenessProbe.httpGet.path;
        const deadline = Date.now() + 60_000;
        for (;;) {
            try {
                if ((await fetch(`http://127.0.0.1:${port}${ping}`)).status === 200) break;
            } catch { /* not up yet */ }
            if (proxy.exitCode !== null) throw new Error(`oauth2-proxy exited with ${proxy.exitCode}: ${out.slice(-3000)}`);
            if (Date.now() > deadline) throw new Error(`oauth2-proxy did not answer ${ping} within 60 s: ${out.slice(-3000)}`);
            await new Promise((res) => setTimeout(res, 300));
        }
    });

    after(async () => {
        if (proxy && proxy.exitCode === null) {
            const exited = new Promise((res) => proxy!.once("exit", res));
            proxy.kill("SIGTERM");
            await exited;
        }
        await new Promise((res) => issuerServer?.close(res));
    });

    test("the binary is the pinned release", async () => {
        const version = await new Promise<string>((resolve) => {
            let v = "";
            const c = spawn(goBinary(PIN), ["--version"], { stdio: ["ignore", "pipe", "pipe"] });
            c.stdout!.on("data", (b) => (v += b));
            c.on("close", () => resolve(v));
        });
        assert.match(version, new RegExp(`^oauth2-proxy ${PIN.release.replace(/\./g, "\\.")} `));
    });

    test("it started with the rendered arguments and environment: discovery of the configured issuer, then the probe paths answer 200", async () => {
        assert.ok(discoveryHits.some((u) => u.endsWith("/.well-known/openid-configuration")), "the issuer's discovery document was not read");
        for (const probe of [container.livenessProbe, container.readinessProbe]) {
            assert.equal(probe.httpGet.port, container.ports[0].containerPort, "the probe targets the proxy's port");
            const res = await fetch(`http://127.0.0.1:${port}${probe.httpGet.path}`);
            assert.equal(res.status, 200, probe.httpGet.path);
            assert.equal((await res.text()).trim(), "OK");
        }
        assert.deepEqual([container.livenessProbe.httpGet.path, container.readinessProbe.httpGet.path], ["/ping", "/ready"]);
        assert.doesNotMatch(out, /render-client-secret/, "the client secret was logged");
    });

    test("a browser without a session is redirected to the configured issuer's login, with the client id and a callback on the forwarded host", async () => {
        const res = await fetch(`http://127.0.0.1:${port}/session/123`, {
            redirect: "manual",
            headers: { accept: "text/html", "x-forwarded-host": host, "x-forwarded-proto": "https", "x-forwarded-uri": "/session/123" },
        });
        assert.equal(res.status, 302, await res.text());
        const location = new URL(res.headers.get("location")!);
        assert.equal(`${location.origin}${location.pathname}`, `${issuer}/protocol/openid-connect/auth`);
        assert.equal(location.searchParams.get("client_id"), CLIENT_ID);
        assert.equal(location.searchParams.get("response_type"), "code");
        assert.equal(location.searchParams.get("redirect_uri"), `https://${host}/oauth2/callback`);
        assert.match(location.searchParams.get("scope") ?? "", /\bopenid\b/);
        assert.ok(location.searchParams.get("state"), "no state");
        assert.match(res.headers.get("set-cookie") ?? "", /_oauth2_proxy_csrf/, "no CSRF cookie");
        // an API client gets a 401 instead of a redirect
        const api = await fetch(`http://127.0.0.1:${port}/session`, { redirect: "manual", headers: { accept: "application/json" } });
        assert.equal(api.status, 401);
    });
}, missing);
