/**
 * The explain part of `npm run diff`: QoS, reachability and capacity changes between two hand-made
 * revisions, the sentences of the report and the Mermaid diagram of the pull-request comment.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { K8sObject } from "../policies/gatekeeper/types";
import { explainDiff, mermaidFlows } from "../cli/diff/explain";
import { renderJson } from "../cli/diff/json";
import { renderMarkdown } from "../cli/diff/markdown";
import { buildReport } from "../cli/diff/report";

const files = {
    "node/pool.yaml": "count: 3\ncpu: \"8\"\nmemory: 32Gi\n",
    "node/kubelet-config.yaml": "systemReserved: {cpu: 500m, memory: 512Mi}\nkubeReserved: {cpu: 500m, memory: 512Mi}\nevictionHard: {memory.available: 100Mi}\n",
};
const ns = (name: string): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
const app = (namespace: string, name: string, port: number, resources: any, replicas = 1): K8sObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace },
    spec: { replicas, strategy: { type: "Recreate" }, template: { metadata: { labels: { app: name } }, spec: { containers: [{ name, image: "x", ports: [{ containerPort: port }], resources }] } } },
});
const guaranteed = { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "500m", memory: "1Gi" } };
const burstable = { requests: { cpu: "250m", memory: "1Gi" }, limits: { cpu: "500m", memory: "1Gi" } };
const denyData: K8sObject = { apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name: "deny", namespace: "data" }, spec: { podSelector: {}, policyTypes: ["Ingress"] } };
const allowBooking: K8sObject = {
    apiVersion: "networking.k8s.io/v1",
    kind: "NetworkPolicy",
    metadata: { name: "postgres", namespace: "data" },
    spec: { podSelector: { matchLabels: { app: "postgres" } }, policyTypes: ["Ingress"], ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "booking" } } }], ports: [{ port: 5432 }] }] },
};

const base = [ns("booking"), ns("data"), app("booking", "booking", 8080, guaranteed), app("data", "postgres", 5432, guaranteed), app("data", "redis", 6379, guaranteed), denyData];
const head = [ns("booking"), ns("data"), app("booking", "booking", 8080, guaranteed), app("data", "postgres", 5432, guaranteed), app("data", "redis", 6379, burstable), denyData, allowBooking, app("data", "big", 80, { requests: { cpu: "20", memory: "1Gi" } })];

describe("diff: what the change does on the cluster", () => {
    it("reports a flow opened, a QoS class lost and a stack that no longer fits", () => {
        const d = explainDiff("prod", { objects: base, files }, { objects: head, files });
        assert.equal(d.available, true);
        if (!d.available) return;
        const texts = d.changes.map((c) => `${c.area}: ${c.text}`);
        assert.ok(texts.includes("reachability: booking/booking → data/postgres: 5432/TCP opened"), texts.join("\n"));
        assert.ok(texts.includes("isolation: data/redis: Guaranteed → Burstable"), texts.join("\n"));
        assert.ok(texts.includes("isolation: data/redis/redis: cpu.shares 512 → 256, oom_score_adj -998 → 969"), texts.join("\n"));
        // A 20 CPU pod fits no node of 8 CPU, whatever their number.
        assert.ok(texts.includes("capacity: prod no longer fits 3 node(s) of 8 CPU / 32Gi (needs more)"), texts.join("\n"));
        assert.deepEqual(d.notes, []);
    });
    it("counts the add-on charts' pods of each side's helm Releases: a bigger Argo CD controller no longer fits", () => {
        const small = { count: 1, cpu: "2", memory: "8Gi" };
        const oneNode = { ...files, "node/pool.yaml": `count: ${small.count}\ncpu: "${small.cpu}"\nmemory: ${small.memory}\n` };
        const argo = (cpu: string) => [{ type: "kubernetes:helm.sh/v3:Release", urn: "urn:argo", name: "addons-argo-cd", props: {
            name: "argo-cd", namespace: "argocd", chart: "argo-cd", version: "7.7.11",
            values: { controller: { resources: { requests: { cpu, memory: "1Gi" }, limits: { cpu, memory: "1Gi" } } }, dex: { enabled: false } },
        } }];
        // 1 CPU allocatable: 500m of the program's, the controller 100m (and the chart's other pods without requests) fit; 600m does not.
        const d = explainDiff("ci", { objects: base.slice(0, 2).concat([app("booking", "booking", 8080, guaranteed)]), files: oneNode, resources: argo("100m") }, { objects: base.slice(0, 2).concat([app("booking", "booking", 8080, guaranteed)]), files: oneNode, resources: argo("600m") });
        assert.equal(d.available, true);
        if (!d.available) return;
        const texts = d.changes.map((c) => `${c.area}: ${c.text}`);
        assert.ok(texts.includes("capacity: ci no longer fits 1 node(s) of 2 CPU / 8Gi (needs 2)"), texts.join("\n"));
    });
    it("the comment shows the changes and a Mermaid diagram of the flows; the JSON carries them", async () => {
        const r = await buildReport("prod", { info: { ref: "main", problems: [] }, objects: base, resources: [], files }, { info: { ref: "working tree", problems: [] }, objects: head, resources: [], files }, {});
        const md = renderMarkdown(r);
        assert.match(md, /#### What changes on the cluster/);
        assert.match(md, /- \*\*isolation\*\*: data\/redis: Guaranteed → Burstable/);
        assert.match(md, /```mermaid\nflowchart LR\n/);
        assert.match(md, /n_booking_booking -->\|"\+ 5432\/TCP"\| n_data_postgres/);
        const json = JSON.parse(renderJson([r]));
        assert.equal(json.stacks[0].explain.available, true);
        assert.ok(json.stacks[0].explain.flows.some((f: any) => f.from === "booking/booking" && f.to === "data/postgres"));
    });
    it("a closed flow is a dotted arrow; no change means no diagram", () => {
        assert.deepEqual(mermaidFlows([]), []);
        const lines = mermaidFlows([{ from: "a/x", to: "b/(chart pods)", opened: [], closed: ["443/TCP"] }]);
        assert.ok(lines.includes('  n_a_x -.->|"− 443/TCP"| n_b__chart_pods_'), lines.join("\n"));
    });
    it("sides without render files use the working tree's node pool of the stack, and say so", () => {
        const d = explainDiff("prod", { objects: base }, { objects: base });
        assert.equal(d.available, true);
        if (d.available) {
            assert.deepEqual(d.changes, []);
            assert.match(d.notes.join("\n"), /working tree's node pool/);
        }
    });
});

describe("diff: the base render's extra files", () => {
    it("are read back from the render folder, without the manifests and resources", async () => {
        const fs = await import("node:fs");
        const os = await import("node:os");
        const path = await import("node:path");
        const { readRenderedFiles } = await import("../cli/diff/worktree");
        const dir = fs.mkdtempSync(path.join(os.tmpdir(), "explain-files-"));
        try {
            fs.mkdirSync(path.join(dir, "node"));
            fs.writeFileSync(path.join(dir, "manifests.yaml"), "");
            fs.writeFileSync(path.join(dir, "resources.json"), "[]");
            fs.writeFileSync(path.join(dir, "node", "pool.yaml"), "count: 3\n");
            assert.deepEqual(readRenderedFiles(dir), { "node/pool.yaml": "count: 3\n" });
        } finally {
            fs.rmSync(dir, { recursive: true, force: true });
        }
    });
});
