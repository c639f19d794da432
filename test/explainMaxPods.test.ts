/**
 * explain counts pods per node against the kubelet's maxPods (issue 22): 110 when the rendered
 * kubelet configuration does not set it (KubeletConfiguration's default), its value otherwise.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../policies/gatekeeper/types";
import { capacity, nodesFromFiles } from "../cli/explain/capacity";
import { limitRangesOf } from "../cli/explain/qos";
import { workloadsOf } from "../cli/explain/workloads";

const GiB = 1024 ** 3;
// 166 small pods: cpu and memory would fit them on one node.
const tiny: K8sObject = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "tiny", namespace: "a" },
    spec: { replicas: 166, strategy: { type: "Recreate" }, selector: { matchLabels: { app: "tiny" } }, template: { metadata: { labels: { app: "tiny" } }, spec: { containers: [{ name: "c", image: "x", resources: { requests: { cpu: "10m", memory: "16Mi" }, limits: { cpu: "10m", memory: "16Mi" } } }] } } },
};

function fit(kubelet: Record<string, unknown>) {
    const nodes = nodesFromFiles({ count: 1, cpu: "8", memory: "32Gi" }, kubelet);
    return capacity({ workloads: workloadsOf([tiny]), objects: [tiny], limitRanges: limitRangesOf([tiny]), pool: nodes.pool, agent: nodes.agent });
}

test("without maxPods in the kubelet configuration, one node holds 110 pods: 166 do not fit", () => {
    const r = fit({ systemReserved: { cpu: "100m", memory: "256Mi" } });
    assert.equal(r.fits, false);
    assert.equal(r.perNode[0].pods, 110);
    assert.equal(r.unschedulable.length, 56);
    assert.equal(r.minNodes, 2);
    assert.equal(r.allocatablePerNode.pods, 110);
    assert.ok(r.assumptions.some((a) => /at most 110 pods per node \(the kubelet's maxPods/.test(a)), r.assumptions.join("\n"));
});

test("the rendered kubelet configuration's maxPods is used", () => {
    const r = fit({ maxPods: 200 });
    assert.equal(r.fits, true);
    assert.equal(r.perNode[0].pods, 166);
    assert.equal(fit({ maxPods: 50 }).minNodes, 4);
    void GiB;
});
