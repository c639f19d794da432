/**
 * Explain's formulas on the specification's own examples (section 2.1's table, 2.4's rules, 2.5's
 * semantics) and on small hand-built stacks: QoS and control-group values, reachability with a
 * pod selected by two policies, the autoscaler simulation, capacity with placement, rollout and
 * drain bounds, stable names.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { K8sObject } from "../policies/gatekeeper/types";
import { hpaOf, rawDesired, scaleDownLimit, scaleUpLimit, simulate, stepProfile, whyNoAutoscaler } from "../cli/explain/autoscaling";
import { allocatable, capacity, cronMinutesOfDay, cronPeak, place, podRequest } from "../cli/explain/capacity";
import { names } from "../cli/explain/names";
import { cfsQuotaUs, cpuShares, effectiveResources, isolationOf, limitRangesOf, oomScoreAdj, qosClass, UNLIMITED_MEMORY } from "../cli/explain/qos";
import { cidrContains, DeclaredFlows, reachability } from "../cli/explain/reachability";
import { allowedDisruptions, rollouts } from "../cli/explain/rollout";
import { workloadsOf } from "../cli/explain/workloads";
import { workingTreeNodeFiles } from "../cli/diff/explain";
import { loadConfig, mapSource } from "../config";
import { readStackValues } from "../cli/harness/stackConfig";

const GiB = 2 ** 30;
const MiB = 2 ** 20;

function deployment(ns: string, name: string, labels: Record<string, string>, opts: { replicas?: number; ports?: number[]; resources?: any; init?: any[]; spec?: any; podSpec?: any } = {}): K8sObject {
    return {
        apiVersion: "apps/v1",
        kind: "Deployment",
        metadata: { name, namespace: ns },
        spec: {
            replicas: opts.replicas ?? 1,
            selector: { matchLabels: labels },
            ...opts.spec,
            template: {
                metadata: { labels },
                spec: {
                    initContainers: opts.init,
                    containers: [{ name: "main", image: "x", ports: (opts.ports ?? []).map((p) => ({ containerPort: p })), resources: opts.resources }],
                    ...opts.podSpec,
                },
            },
        },
    };
}

const policy = (ns: string, name: string, spec: any): K8sObject => ({ apiVersion: "networking.k8s.io/v1", kind: "NetworkPolicy", metadata: { name, namespace: ns }, spec });
const namespaceObj = (name: string): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

describe("section 2.1: control groups and QoS classes", () => {
    it("cpu.shares = request millicores x 1024 / 1000: 500m gives 512, 250m gives 256; BestEffort gets 2", () => {
        assert.equal(cpuShares(500), 512);
        assert.equal(cpuShares(250), 256);
        assert.equal(cpuShares(1000), 1024);
        assert.equal(cpuShares(undefined), 2);
    });
    it("cpu.cfs_quota_us = limit millicores x 100000 / 1000, -1 without a limit", () => {
        assert.equal(cfsQuotaUs(500), 50000);
        assert.equal(cfsQuotaUs(2000), 200000);
        assert.equal(cfsQuotaUs(undefined), -1);
    });
    it("oom_score_adj: Guaranteed -998, BestEffort 1000, Burstable within 2..999", () => {
        assert.equal(oomScoreAdj("Guaranteed", GiB, 32 * GiB), -998);
        assert.equal(oomScoreAdj("BestEffort", undefined, 32 * GiB), 1000);
        // 1000 - 1000 x 1Gi / 32Gi = 1000 - 31.25 -> 969
        assert.equal(oomScoreAdj("Burstable", GiB, 32 * GiB), 969);
        assert.equal(oomScoreAdj("Burstable", 32 * GiB, 32 * GiB), 2);
        assert.equal(oomScoreAdj("Burstable", 0, 32 * GiB), 999);
    });
    it("classes: requests equal limits -> Guaranteed; requests only -> Burstable; nothing -> BestEffort; limits alone default the requests", () => {
        assert.equal(qosClass([{ cpuRequest: 500, cpuLimit: 500, memoryRequest: GiB, memoryLimit: GiB }]), "Guaranteed");
        assert.equal(qosClass([{ cpuRequest: 250, memoryRequest: GiB }]), "Burstable");
        assert.equal(qosClass([{}]), "BestEffort");
        assert.equal(qosClass([effectiveResources({ cpuLimit: 500, memoryLimit: GiB }).effective]), "Guaranteed");
        // One container short of a memory limit makes the pod Burstable.
        assert.equal(qosClass([{ cpuRequest: 500, cpuLimit: 500, memoryRequest: GiB, memoryLimit: GiB }, { cpuRequest: 500, cpuLimit: 500, memoryRequest: GiB }]), "Burstable");
    });
    it("a BestEffort pod: shares 2, no quota, the unlimited memory value, oom_score_adj 1000", () => {
        const [w] = workloadsOf([deployment("a", "be", { app: "be" })]);
        const iso = isolationOf(w, new Map(), 8 * GiB);
        assert.equal(iso.qos, "BestEffort");
        assert.deepEqual([iso.containers[0].cpuShares, iso.containers[0].cfsQuotaUs, iso.containers[0].memoryLimitInBytes, iso.containers[0].oomScoreAdj], [2, -1, UNLIMITED_MEMORY, 1000]);
        assert.equal(UNLIMITED_MEMORY, "9223372036854771712");
    });
    it("the namespace's LimitRange fills what a container leaves out, init containers included", () => {
        const lr: K8sObject = { apiVersion: "v1", kind: "LimitRange", metadata: { name: "d", namespace: "a" }, spec: { limits: [{ type: "Container", default: { cpu: "500m", memory: "512Mi" }, defaultRequest: { cpu: "100m", memory: "128Mi" } }] } };
        const objects = [lr, deployment("a", "w", { app: "w" }, { init: [{ name: "setup", image: "x" }], resources: { requests: { cpu: "250m", memory: "256Mi" } } })];
        const [w] = workloadsOf(objects);
        const iso = isolationOf(w, limitRangesOf(objects), 8 * GiB);
        const [init, main] = iso.containers;
        assert.equal(init.init, true);
        assert.deepEqual(init.effective, { cpuRequest: 100, cpuLimit: 500, memoryRequest: 128 * MiB, memoryLimit: 512 * MiB });
        assert.deepEqual(init.fromLimitRange.sort(), ["limits.cpu", "limits.memory", "requests.cpu", "requests.memory"]);
        assert.equal(main.cpuShares, 256);
        assert.equal(main.cfsQuotaUs, 50000);
        assert.equal(main.memoryLimitInBytes, String(512 * MiB));
        assert.equal(iso.qos, "Burstable");
    });
});

describe("section 2.5: reachability", () => {
    const web = deployment("a", "web", { app: "web" }, { ports: [80] });
    const cli = deployment("a", "cli", { app: "cli" });
    const db = deployment("b", "db", { app: "db" }, { ports: [5432, 9187] });
    const base = [namespaceObj("a"), namespaceObj("b"), web, cli, db];
    const flows = (objects: K8sObject[], declared?: DeclaredFlows[]) => {
        const r = reachability(objects, workloadsOf(objects), declared);
        return { r, ports: (from: string, to: string) => r.open.find((f) => f.from === from && f.to === to)?.ports ?? [] };
    };

    it("without any policy every pod reaches every other on its ports", () => {
        const { ports } = flows(base);
        assert.deepEqual(ports("a/web", "b/db"), ["5432/TCP", "9187/TCP"]);
        assert.deepEqual(ports("b/db", "a/web"), ["80/TCP"]);
        assert.deepEqual(ports("a/web", "internet"), ["any"]);
    });
    it("a default deny on the destination closes everything into it", () => {
        const { ports, r } = flows([...base, policy("b", "deny", { podSelector: {}, policyTypes: ["Ingress"] })]);
        assert.deepEqual(ports("a/web", "b/db"), []);
        assert.deepEqual(ports("b/db", "a/web"), ["80/TCP"]);
        assert.ok(r.unselected.some((u) => u.endpoint === "b/db" && u.direction === "egress"));
    });
    it("a pod selected by two policies gets the union of their allows, on their ports only", () => {
        const objects = [
            ...base,
            policy("b", "deny", { podSelector: {}, policyTypes: ["Ingress", "Egress"] }),
            policy("b", "from-web", { podSelector: { matchLabels: { app: "db" } }, policyTypes: ["Ingress"], ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "a" } }, podSelector: { matchLabels: { app: "web" } } }], ports: [{ port: 5432 }] }] }),
            policy("b", "from-cli", { podSelector: { matchLabels: { app: "db" } }, policyTypes: ["Ingress"], ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "a" } }, podSelector: { matchLabels: { app: "cli" } } }], ports: [{ port: 9187 }] }] }),
        ];
        const { ports } = flows(objects);
        assert.deepEqual(ports("a/web", "b/db"), ["5432/TCP"]);
        assert.deepEqual(ports("a/cli", "b/db"), ["9187/TCP"]);
        // Egress of db is denied by the namespace policy: db reaches nothing, not even DNS.
        assert.deepEqual(ports("b/db", "a/web"), []);
        assert.deepEqual(ports("b/db", "kube-system/cluster-dns"), []);
    });
    it("a connection needs the source's egress as well as the destination's ingress", () => {
        const objects = [...base, policy("a", "web-egress", { podSelector: { matchLabels: { app: "web" } }, policyTypes: ["Egress"], egress: [{ to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"] } }], ports: [{ port: 443 }] }] })];
        const { ports } = flows(objects);
        assert.deepEqual(ports("a/web", "b/db"), []);
        assert.deepEqual(ports("a/web", "internet"), ["443/TCP"]);
        assert.deepEqual(ports("a/cli", "b/db"), ["5432/TCP", "9187/TCP"]);
        assert.equal(cidrContains("10.0.0.0/8", "10.1.2.3"), true);
        assert.equal(cidrContains("10.0.0.0/8", "11.1.2.3"), false);
    });
    it("named ports resolve against the destination's container ports", () => {
        const named = deployment("b", "db", { app: "db" }, { podSpec: { containers: [{ name: "pg", image: "x", ports: [{ name: "pg", containerPort: 5432 }, { name: "metrics", containerPort: 9187 }] }] } });
        const objects = [namespaceObj("a"), namespaceObj("b"), web, named, policy("b", "pg", { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ ports: [{ port: "pg" }] }] })];
        assert.deepEqual(flows(objects).ports("a/web", "b/db"), ["5432/TCP"]);
    });
    it("pods the render does not hold (charts) appear per namespace, also beside workloads when a namespace-wide policy allows more than DNS", () => {
        const wide = policy("a", "chart-allow", { podSelector: {}, policyTypes: ["Ingress"], ingress: [{ from: [{ ipBlock: { cidr: "0.0.0.0/0" } }], ports: [{ port: 8080 }] }] });
        const dnsOnly = policy("b", "allow-dns", { podSelector: {}, policyTypes: ["Egress"], egress: [{ to: [{ namespaceSelector: {}, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ port: 53, protocol: "UDP" }] }] });
        const { r, ports } = flows([...base, namespaceObj("c"), wide, dnsOnly, policy("c", "deny", { podSelector: {}, policyTypes: ["Ingress"] })]);
        assert.ok(r.endpoints.includes("a/(chart pods)"));
        assert.ok(!r.endpoints.includes("b/(chart pods)"), "a DNS-only namespace policy is not a sign of other pods");
        assert.ok(r.endpoints.includes("c/(chart pods)"), "a namespace with policies and no workloads");
        assert.deepEqual(ports("internet", "a/(chart pods)"), ["8080/TCP"]);
        assert.deepEqual(ports("internet", "a/web"), [], "the namespace-wide policy selects web too: only 8080, which web does not listen on");
    });
    it("compares with the declared flows: open but not needed, needed but closed", () => {
        const objects = [
            ...base,
            policy("b", "db", { podSelector: { matchLabels: { app: "db" } }, policyTypes: ["Ingress"], ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "a" } } }], ports: [{ port: 5432 }] }] }),
        ];
        const peerIn = (ns: string, app: string) => ({ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": ns } }, podSelector: { matchLabels: { app } } });
        const declared: DeclaredFlows[] = [
            { policy: "db", namespace: "b", podSelector: { app: "db" }, ingress: [{ description: "web", peers: [peerIn("a", "web")], ports: [{ port: 5432 }] }], egress: [] },
            { policy: "web", namespace: "a", podSelector: { app: "web" }, ingress: [], egress: [{ description: "db metrics", peers: [peerIn("b", "db")], ports: [{ port: 9187 }] }] },
        ];
        const { r } = flows(objects, declared);
        const d = r.declared!;
        // cli reaches db:5432 through the namespace-wide rule, but nothing declares it.
        assert.ok(d.openNotNeeded.some((f) => f.from === "a/cli" && f.to === "b/db" && f.ports.join() === "5432/TCP"), JSON.stringify(d.openNotNeeded));
        assert.ok(!d.openNotNeeded.some((f) => f.from === "a/web" && f.to === "b/db"));
        // web declares db:9187, db's policy does not admit it.
        assert.deepEqual(d.neededClosed.filter((f) => f.to === "b/db").map((f) => [f.from, f.ports.join()]), [["a/web", "9187/TCP"]]);
    });
});

describe("section 2.4: autoscaler simulation at the 15 s loop", () => {
    const hpa = (behavior: any, min = 1, max = 10): K8sObject => ({ apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "h", namespace: "a" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: min, maxReplicas: max, metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 50 } } }], behavior } });
    const up100 = { scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] } };

    it("desired = ceil(current x current/target); the largest metric wins", () => {
        assert.equal(rawDesired(3, [0.5]), 2);
        assert.equal(rawDesired(4, [1.1]), 5);
        assert.equal(rawDesired(4, [0.5, 1.6, 1]), 7);
    });
    it("a 100 % per 15 s policy doubles each loop and stops at maxReplicas", () => {
        const s = simulate(hpaOf(hpa(up100)), stepProfile([{ at: 0, demand: 1 }, { at: 15, demand: 20 }]), 120);
        assert.deepEqual(s.changes, [[0, 1], [15, 2], [30, 4], [45, 8], [60, 10]]);
    });
    it("selectPolicy Max takes the most permissive policy, Min the strictest", () => {
        const events = [{ t: 0, change: 2 }];
        const rules = (selectPolicy: "Max" | "Min") => ({ stabilizationWindowSeconds: 0, selectPolicy, policies: [{ type: "Pods" as const, value: 4, periodSeconds: 60 }, { type: "Percent" as const, value: 100, periodSeconds: 60 }] });
        // 4 replicas now, 2 added within the period: period start 2; Pods -> 6, Percent -> 4.
        assert.equal(scaleUpLimit(4, events, 30, rules("Max")), 6);
        assert.equal(scaleUpLimit(4, events, 30, rules("Min")), 4);
        const down = (selectPolicy: "Max" | "Min") => ({ stabilizationWindowSeconds: 0, selectPolicy, policies: [{ type: "Pods" as const, value: 1, periodSeconds: 60 }, { type: "Percent" as const, value: 50, periodSeconds: 60 }] });
        assert.equal(scaleDownLimit(10, [], 0, down("Max")), 5);
        assert.equal(scaleDownLimit(10, [], 0, down("Min")), 9);
    });
    it("the scale-down stabilization window holds the highest recommendation for its length", () => {
        const h = hpaOf(hpa({ ...up100, scaleDown: { stabilizationWindowSeconds: 300, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] } }, 2, 10));
        const s = simulate(h, stepProfile([{ at: 0, demand: 8 }, { at: 60, demand: 2 }]), 600, 8);
        // Recommendations of 8 until 45 s; the window (t-300, t] still holds one at 330 s, none at 345 s.
        assert.deepEqual(s.changes, [[0, 8], [345, 2]]);
    });
    it("scale-down by one pod a minute once the window has passed (steady at 4 before the load fell at 0 s)", () => {
        const h = hpaOf(hpa({ scaleDown: { stabilizationWindowSeconds: 60, selectPolicy: "Min", policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] } }, 1, 10));
        const s = simulate(h, stepProfile([{ at: 0, demand: 1 }]), 300, 4);
        // Recommendations of 4 at -45..-15 s; (t-60, t] holds none at 45 s; then one pod per 60 s period.
        assert.deepEqual(s.changes, [[0, 4], [45, 3], [105, 2], [165, 1]]);
    });
    it("says why a workload has no autoscaler", () => {
        const [cron] = workloadsOf([{ apiVersion: "batch/v1", kind: "CronJob", metadata: { name: "c", namespace: "a" }, spec: { schedule: "0 3 * * *", jobTemplate: { spec: { template: { spec: { containers: [] } } } } } }]);
        assert.match(whyNoAutoscaler(cron, []), /runs to completion/);
        const [rec] = workloadsOf([deployment("a", "r", { app: "r" }, { spec: { strategy: { type: "Recreate" } } })]);
        assert.match(whyNoAutoscaler(rec, []), /single writer/);
    });
});

describe("capacity on a small hand-made stack", () => {
    const pool = { count: 2, cpu: 4000, memory: 8 * GiB };
    const agent = { systemReserved: { cpu: 500, memory: 512 * MiB }, kubeReserved: { cpu: 500, memory: 512 * MiB }, evictionMemoryAvailable: "100Mi" };
    const res = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
    const cronJob = (name: string, schedule: string, cpu: string): K8sObject => ({ apiVersion: "batch/v1", kind: "CronJob", metadata: { name, namespace: "a" }, spec: { schedule, jobTemplate: { spec: { activeDeadlineSeconds: 3600, template: { spec: { containers: [{ name: "c", image: "x", resources: res(cpu, "128Mi") }] } } } } } });

    it("allocatable = capacity - systemReserved - kubeReserved - evictionHard (a quantity or a percentage)", () => {
        assert.deepEqual(allocatable(pool, agent), { cpu: 3000, memory: 8 * GiB - GiB - 100 * MiB, pods: 110 });
        assert.equal(allocatable(pool, { ...agent, evictionMemoryAvailable: "10%" }).memory, 8 * GiB - GiB - Math.ceil(0.8 * GiB));
    });
    it("a pod reserves the larger of its containers' sum and its largest init container", () => {
        assert.deepEqual(podRequest({ initContainers: [{ resources: { requests: { cpu: "2", memory: "64Mi" } } }], containers: [{ resources: { requests: { cpu: "500m", memory: "1Gi" } } }, { resources: { requests: { cpu: "500m", memory: "1Gi" } } }] }), { cpu: 2000, memory: 2 * GiB, ephemeralStorage: 0 });
        // Ephemeral storage the same way: the app containers' sum (2 x 1Gi) against the init container (1536Mi).
        const disk = (q: string) => ({ resources: { requests: { cpu: "100m", memory: "64Mi", "ephemeral-storage": q } } });
        assert.equal(podRequest({ initContainers: [disk("1536Mi")], containers: [disk("1Gi"), disk("1Gi")] }).ephemeralStorage, 2 * GiB);
        assert.equal(podRequest({ initContainers: [disk("3Gi")], containers: [disk("1Gi")] }).ephemeralStorage, 3 * GiB);
    });
    it("ephemeral storage fits the node's disk after the reservations and evictionHard nodefs.available", () => {
        const pool = { count: 1, cpu: 4000, memory: 16 * GiB, ephemeralStorage: 100 * GiB };
        const agent = { systemReserved: { cpu: 0, memory: 0, ephemeralStorage: GiB }, kubeReserved: { cpu: 0, memory: 0, ephemeralStorage: GiB }, evictionMemoryAvailable: "0", evictionNodefsAvailable: "10%" };
        assert.equal(allocatable(pool, agent).ephemeralStorage, 88 * GiB);
        const pod = (id: string, disk: number) => ({ id, workload: id, namespace: "n", labels: {}, request: { cpu: 10, memory: 10, ephemeralStorage: disk }, spread: [], antiAffinity: [] });
        const r = place([pod("a", 60 * GiB), pod("b", 30 * GiB)], 1, allocatable(pool, agent));
        assert.deepEqual(r.unschedulable.map((p) => p.id), ["b"]);
    });
    it("CronJobs overlap within their run time: 03:00 and 03:30 with one hour each, not 05:00", () => {
        assert.deepEqual(cronMinutesOfDay("30 3 * * *"), [210]);
        assert.equal(cronMinutesOfDay("*/15 * * * *").length, 96);
        assert.deepEqual(cronMinutesOfDay("0 0 31 2 *"), []);
        const peak = cronPeak([
            { id: "p", minutes: [180], runSeconds: 3600, request: { cpu: 100, memory: 0 }, pods: 1 },
            { id: "r", minutes: [210], runSeconds: 3600, request: { cpu: 100, memory: 0 }, pods: 1 },
            { id: "o", minutes: [300], runSeconds: 3600, request: { cpu: 150, memory: 0 }, pods: 1 },
        ]);
        assert.deepEqual([peak.jobs, peak.cpu], [["p", "r"], 200]);
    });
    it("required anti-affinity spreads one pod per node: three replicas do not fit two nodes; the HPA maximum and the surge count", () => {
        const anti = { affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ topologyKey: "kubernetes.io/hostname", labelSelector: { matchLabels: { app: "web" } } }] } } };
        const web = deployment("a", "web", { app: "web" }, { replicas: 2, resources: res("1", "1Gi"), podSpec: anti, spec: { strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } } } });
        const objects = [web, cronJob("p", "0 3 * * *", "500m"), cronJob("r", "30 3 * * *", "500m")];
        const workloads = workloadsOf(objects);
        const fitting = capacity({ workloads, objects, limitRanges: new Map(), pool, agent });
        // 2 replicas + 1 surge pod with anti-affinity on 2 nodes: the surge pod has no node.
        assert.equal(fitting.fits, false);
        assert.equal(fitting.minNodes, 3);
        assert.deepEqual([fitting.demand.steady.pods, fitting.demand.rolloutSurge.pods, fitting.demand.cronJobs.pods], [2, 1, 2]);
        assert.equal(fitting.demand.total.cpu, 4000);
        const hpa: K8sObject = { apiVersion: "autoscaling/v2", kind: "HorizontalPodAutoscaler", metadata: { name: "web", namespace: "a" }, spec: { scaleTargetRef: { kind: "Deployment", name: "web" }, minReplicas: 1, maxReplicas: 4 } };
        const scaled = capacity({ workloads, objects: [...objects, hpa], limitRanges: new Map(), pool: { ...pool, count: 5 }, agent });
        assert.equal(scaled.demand.steady.pods, 4);
        assert.equal(scaled.fits, true);
        assert.equal(scaled.minNodes, 5);
    });
    it("without constraints the pods pack onto the fewest nodes that hold their requests", () => {
        const objects = [deployment("a", "w", { app: "w" }, { replicas: 5, resources: res("1", "1Gi"), spec: { strategy: { type: "Recreate" } } })];
        const r = capacity({ workloads: workloadsOf(objects), objects, limitRanges: new Map(), pool, agent });
        assert.equal(r.fits, true);
        assert.equal(r.minNodes, 2);
        assert.equal(r.left.cpu, "1");
    });
});

describe("rollouts, drains and names", () => {
    it("a Deployment of 4 with the default 25 % surge and unavailability: at most 5 pods, at least 3 serving; Recreate serves none", () => {
        const objects = [deployment("a", "w", { app: "w" }, { replicas: 4 }), deployment("a", "r", { app: "r" }, { replicas: 1, spec: { strategy: { type: "Recreate" } } })];
        const r = rollouts(objects, workloadsOf(objects));
        const w = r.rollouts.find((x) => x.workload === "a/w")!;
        assert.deepEqual([w.maxPods, w.minServing], [5, 3]);
        assert.deepEqual([r.rollouts.find((x) => x.workload === "a/r")!.minServing], [0]);
        assert.deepEqual(r.withoutBudget.sort(), ["a/r", "a/w"]);
    });
    it("a PodDisruptionBudget allows maxUnavailable, or pods minus minAvailable (percentages round up)", () => {
        assert.equal(allowedDisruptions({ maxUnavailable: 1 }, 3), 1);
        assert.equal(allowedDisruptions({ minAvailable: 2 }, 3), 1);
        assert.equal(allowedDisruptions({ minAvailable: "100%" }, 3), 0);
        assert.equal(allowedDisruptions({ minAvailable: "50%" }, 3), 1);
    });
    it("StatefulSet pods are <statefulset>-<ordinal>.<service>.<namespace>.svc.cluster.local through a headless service", () => {
        const sts: K8sObject = { apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "pg", namespace: "data" }, spec: { replicas: 2, serviceName: "pg-headless", template: { metadata: { labels: { app: "pg" } }, spec: { containers: [] } } } };
        const svc: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "pg-headless", namespace: "data" }, spec: { clusterIP: "None", ports: [{ name: "pg", port: 5432 }] } };
        const n = names([sts, svc], workloadsOf([sts]));
        assert.deepEqual(n.statefulPods.map((p) => p.dns), ["pg-0.pg-headless.data.svc.cluster.local", "pg-1.pg-headless.data.svc.cluster.local"]);
        assert.equal(n.services[0].dns, "pg-headless.data.svc.cluster.local");
        assert.equal(n.services[0].headless, true);
        const plain = names([sts, { ...svc, spec: { ports: [] } }], workloadsOf([sts]));
        assert.match(plain.statefulPods[0].problem ?? "", /not headless/);
    });
});

describe("node pool configuration", () => {
    const load = (overrides: Record<string, unknown>) => {
        const v = readStackValues("dev", overrides);
        const raw = Object.fromEntries(Object.entries(v.config).filter(([k]) => k.startsWith(`${v.project}:`)).map(([k, x]) => [k.slice(v.project.length + 1), x]));
        return loadConfig(mapSource(v.project, "dev", raw));
    };
    it("is rendered to node/pool.yaml from the typed config", () => {
        assert.match(workingTreeNodeFiles("dev")["node/pool.yaml"], /count: 1\ncpu: "4"\nmemory: 16Gi/);
    });
    it("refuses a node smaller than the node agent's reservations, naming the key and the expected form", () => {
        assert.throws(() => load({ nodePoolCpu: "500m" }), /ops:nodePoolCpu: 500m leaves nothing after systemReserved \+ kubeReserved \(500m\); expected a cpu quantity above 500m/);
        assert.throws(() => load({ nodePoolMemory: "512Mi" }), /ops:nodePoolMemory: .*expected a memory quantity above 612Mi/);
        assert.throws(() => load({ nodePoolCount: 0 }), /ops:nodePoolCount/);
    });
});
