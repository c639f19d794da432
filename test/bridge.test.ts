import { test } from "node:test";
import * as assert from "node:assert/strict";
import { find, renderStack } from "./render";

const envOf = (c: any) => Object.fromEntries(c.env.map((e: any) => [e.name, e.value ?? e.valueFrom]));

test("bridge: requests 100m/128Mi, limits 500m/256Mi in prod; probes on the bridge's own /health", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    // ephemeral storage: its logs (64Mi) requested; limited to them plus its /tmp emptyDir (256Mi).
    assert.deepEqual(c.resources, { requests: { cpu: "100m", memory: "128Mi", "ephemeral-storage": "64Mi" }, limits: { cpu: "500m", memory: "256Mi", "ephemeral-storage": "320Mi" } });
    assert.equal(c.readinessProbe.httpGet.path, "/health");
    assert.equal(c.ports[0].containerPort, 3100, "BRIDGE_PORT's default in opencode-bridge");
});

test("bridge: exactly opencode-bridge's environment; section 2.8's settings as strings (chunk size 4, delay 10 ms); it forwards to the agent server", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    assert.deepEqual(envOf(c), {
        BRIDGE_PORT: "3100",
        OPENCODE_BASE: "http://agent-server-4000.agent.svc.cluster.local:4000",
        DEFAULT_MODEL: "upstream/gpt-5",
        OPENAI_STREAM_CHUNK_SIZE: "4",
        OPENAI_STREAM_CHUNK_DELAY_MS: "10",
        ENABLE_LEADING_ECHO_FILTER: "false",
    });
    assert.equal(c.volumeMounts.length, 1, "no settings file: the bridge reads only its environment");
    assert.equal(find(r, "Service", "model-bridge", "agent").spec.ports[0].port, 3100);
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
