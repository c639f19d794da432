import { test } from "node:test";
import * as assert from "node:assert/strict";
import { find, renderStack } from "./render";

test("bridge: requests 100m/128Mi, limits 500m/256Mi in prod", async () => {
    const r = await renderStack("prod");
    const c = find(r, "Deployment", "model-bridge", "agent").spec.template.spec.containers[0];
    assert.deepEqual(c.resources, { requests: { cpu: "100m", memory: "128Mi" }, limits: { cpu: "500m", memory: "256Mi" } });
    assert.equal(c.readinessProbe.httpGet.path, "/v1/models");
});

test("bridge settings of section 2.8 are strings: chunk size 4, delay 10 ms", async () => {
    const r = await renderStack("prod");
    const settings = JSON.parse(find(r, "ConfigMap", "model-bridge-settings").data["settings.json"]);
    assert.deepEqual(settings, { defaultModel: "openai/gpt-5", openaiStreamChunkSize: "4", openaiStreamChunkDelayMs: "10", enableLeadingEchoFilter: "true" });
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
