import { test } from "node:test";
import * as assert from "node:assert/strict";
import { find, renderStack } from "./render";

const envOf = (c: any) => Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

test("bridge: requests 100m/128Mi, limits 500m/256Mi in prod; liveness on /health, readiness on /ready (the agent server answers); it runs bridge/'s start command", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    // ephemeral storage: its logs (64Mi) requested; limited to them plus its /tmp emptyDir (256Mi).
    assert.deepEqual(c.resources, { requests: { cpu: "100m", memory: "128Mi", "ephemeral-storage": "64Mi" }, limits: { cpu: "500m", memory: "256Mi", "ephemeral-storage": "320Mi" } });
    assert.equal(c.livenessProbe.httpGet.path, "/health");
    assert.equal(c.readinessProbe.httpGet.path, "/ready");
    assert.equal(c.ports[0].containerPort, 3100, "BRIDGE_PORT's default in opencode-bridge");
    assert.deepEqual(c.command, ["/usr/local/bin/node", "/app/main.js"]);
    assert.equal(c.args, undefined);
});

test("41.7 bridge: rollouts let running chats finish: the grace period is the preStop wait, the upstream time-out (300 s) and 15 s for aborts", async () => {
    const r = await renderStack("prod");
    const spec = find(r, "Deployment", "model-bridge", "agent").spec.template.spec;
    assert.equal(spec.terminationGracePeriodSeconds, 5 + 300 + 15);
    assert.equal(spec.containers[0].lifecycle.preStop.sleep.seconds, 5);
    const longer = await renderStack("prod", { bridgeUpstreamTimeoutMs: 600_000 });
    assert.equal(find(longer, "Deployment", "model-bridge", "agent").spec.template.spec.terminationGracePeriodSeconds, 5 + 600 + 15);
});

test("bridge: section 2.8's settings under opencode-bridge's names as strings (chunk size 4, delay 10 ms); the agent server's credentials from its Secret; client keys from a mounted generated Secret", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    assert.deepEqual(envOf(c), {
        BRIDGE_PORT: "3100",
        OPENCODE_BASE: "http://agent-server-4000.agent.svc.cluster.local:4000",
        DEFAULT_MODEL: "upstream/gpt-5",
        OPENAI_STREAM_CHUNK_SIZE: "4",
        OPENAI_STREAM_CHUNK_DELAY_MS: "10",
        ENABLE_LEADING_ECHO_FILTER: "false",
        BRIDGE_CLIENT_KEYS_FILE: "/etc/model-bridge/keys/api-keys",
        BRIDGE_UPSTREAM_TIMEOUT_MS: "300000",
        BRIDGE_AGENT: "bridge",
        BRIDGE_REJECT_ASKS: "true",
        BRIDGE_SESSION_IDLE_MS: "3600000",
        // 41.8: section 8.2's 256Mi limit: half for the heap (128 MiB), bodies get (128 - 24) MiB / 10 copies.
        BRIDGE_REQUEST_MEMORY_BYTES: String(Math.floor(((128 - 24) * 1048576) / 10)),
        NODE_OPTIONS: "--max-old-space-size=128 --max-semi-space-size=1",
        OPENCODE_SERVER_USERNAME: { secretKeyRef: { name: "agent-server-auth", key: "username" } },
        OPENCODE_SERVER_PASSWORD: { secretKeyRef: { name: "agent-server-auth", key: "password" } },
    });
    // The same Secret and keys the agent server itself reads its credentials from.
    const server = find(r, "Deployment", "agent-server-4000", "agent").spec.template.spec.containers.find((x: any) => x.name === "server");
    assert.deepEqual(envOf(server).OPENCODE_SERVER_PASSWORD, envOf(c).OPENCODE_SERVER_PASSWORD);
    assert.deepEqual(envOf(server).OPENCODE_SERVER_USERNAME, envOf(c).OPENCODE_SERVER_USERNAME);
    const keys = find(r, "Secret", "model-bridge-api-keys", "agent");
    const key = keys.stringData?.["api-keys"] ?? Buffer.from(keys.data["api-keys"], "base64").toString();
    assert.match(key, /^[A-Za-z0-9]{40}\n$/);
    const spec = find(r, "Deployment", "model-bridge", "agent").spec.template.spec;
    const mount = c.volumeMounts.find((m: any) => m.mountPath === "/etc/model-bridge/keys");
    assert.equal(mount.readOnly, true);
    assert.equal(spec.volumes.find((v: any) => v.name === mount.name).secret.secretName, "model-bridge-api-keys");
    assert.equal(find(r, "Service", "model-bridge", "agent").spec.ports[0].port, 3100);
    // A new agent-server password reaches the bridge's environment by a restart.
    assert.match(JSON.stringify(find(r, "Deployment", "model-bridge", "agent").metadata.annotations), /agent-server-auth/);
});

test("bridge ingress: only /v1 (the bridge's health routes and anything else stay inside the cluster)", async () => {
    const r = await renderStack("prod");
    const paths = find(r, "Ingress", "model-bridge").spec.rules.flatMap((rule: any) => rule.http.paths);
    assert.deepEqual(paths.map((p: any) => [p.path, p.pathType]), [["/v1", "Prefix"]]);
});

test("ci stack: the stand-in keeps its own command line (no node in busybox) and serves the probe paths", async () => {
    const r = await renderStack("ci");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    assert.equal(c.command, undefined);
    assert.match(c.args.join(" "), /for p in health ready readyz v1\/models/);
});

test("bridge network policy: in from the ingress controller only, out to the agent server instance it forwards to", async () => {
    const r = await renderStack("prod");
    const np = find(r, "NetworkPolicy", "model-bridge", "agent");
    assert.equal(np.spec.ingress.length, 1);
    assert.deepEqual(np.spec.ingress[0].ports, [{ port: 3100, protocol: "TCP" }]);
    const out = np.spec.egress.filter((e: any) => !JSON.stringify(e.to).includes("kube-dns"));
    assert.equal(out.length, 1);
    assert.deepEqual(out[0].to[0].podSelector.matchLabels["app.kubernetes.io/instance"], "agent-server-4000");
    assert.deepEqual(out[0].ports, [{ port: 4000, protocol: "TCP" }]);
});

test("bridgeAgentServerPort must be an agent server port; the bridge's model must be one the agent server offers", async () => {
    const bad = await renderStack("dev", { bridgeAgentServerPort: 4002, bridgeDefaultModel: "openai/gpt-5" });
    const text = bad.errors.join("\n");
    assert.match(text, /bridgeAgentServerPort: 4002 is not an agent server port/);
    assert.match(text, /bridgeDefaultModel: openai\/gpt-5 is not a model of the agent server's provider; expected one of upstream\/gpt-5, upstream\/gpt-5-mini/);
    const good = await renderStack("dev", { bridgeAgentServerPort: 4001 });
    assert.deepEqual(good.errors, []);
    assert.equal(envOf(find(good, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0]).OPENCODE_BASE, "http://agent-server-4001.agent.svc.cluster.local:4001");
});

test("bridge ingress has buffering off; the bridge has an autoscaler on cpu utilization and a PDB", async () => {
    const r = await renderStack("prod");
    const a = find(r, "Ingress", "model-bridge").metadata.annotations;
    assert.equal(a["nginx.ingress.kubernetes.io/proxy-buffering"], "off");
    const hpa = find(r, "HorizontalPodAutoscaler", "model-bridge");
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "Deployment", name: "model-bridge" });
    assert.ok(hpa.spec.minReplicas <= hpa.spec.maxReplicas);
    assert.equal(hpa.spec.metrics[0].resource.target.type, "Utilization");
    assert.ok(hpa.spec.behavior.scaleDown.stabilizationWindowSeconds >= 300);
    assert.equal(find(r, "PodDisruptionBudget", "model-bridge").spec.maxUnavailable, 1);
    assert.ok(find(r, "Deployment", "model-bridge").spec.template.spec.topologySpreadConstraints.length > 0, "prod spreads across nodes");
});
