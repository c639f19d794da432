import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf } from "../pack/testing";
import { rule } from "./hpa-utilization-needs-requests";

function stack(): { app: K8sObject; hpa: K8sObject } {
    const app = deployment("web");
    const hpa: K8sObject = {
        apiVersion: "autoscaling/v2",
        kind: "HorizontalPodAutoscaler",
        metadata: { name: "web", namespace: "apps" },
        spec: {
            scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
            minReplicas: 2,
            maxReplicas: 6,
            metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 70 } } }],
        },
    };
    return { app, hpa };
}

test("an autoscaler on cpu utilization whose target requests cpu passes", () => {
    const { app, hpa } = stack();
    assert.deepEqual(messagesOf(rule, [app, hpa]), []);
});

test("a container without the cpu request fails (utilization is relative to the request, 2.4 rule 5)", () => {
    const { app, hpa } = stack();
    app.spec.template.spec.containers.push({ name: "sidecar", image: "registry.example.com/ops/s:1", resources: { requests: { memory: "64Mi" } } });
    const messages = messagesOf(rule, [app, hpa]);
    assert.equal(messages.length, 1);
    assert.match(messages[0], /container sidecar .* no cpu request/);
});

test("a memory utilization metric needs memory requests; AverageValue metrics need none", () => {
    const { app, hpa } = stack();
    delete app.spec.template.spec.containers[0].resources.requests.memory;
    assert.deepEqual(messagesOf(rule, [app, hpa]), []);
    hpa.spec.metrics.push({ type: "Resource", resource: { name: "memory", target: { type: "Utilization", averageUtilization: 80 } } });
    assert.match(messagesOf(rule, [app, hpa]).join("\n"), /no memory request/);
    hpa.spec.metrics[1].resource.target = { type: "AverageValue", averageValue: "200Mi" };
    assert.deepEqual(messagesOf(rule, [app, hpa]), []);
});

test("a target that is not in the stack (other name or namespace) fails", () => {
    const { app, hpa } = stack();
    app.metadata!.namespace = "other";
    assert.match(messagesOf(rule, [app, hpa])[0], /not an object of the stack/);
});
