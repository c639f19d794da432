/**
 * NetworkPolicy on the real node, both ways (issue 40): every flow the program declares (explain's
 * declared-flows.json: each policy's egress to pods and the internet, each ingress from pods)
 * is tried from a pod the policy selects, to a pod the peer selects, on the declared port, and must
 * connect; a sample of flows no policy declares (another namespace, the data stores from outside,
 * the agent server from anything but its bridge) must not. kube-router enforces; this module only
 * tries connections, from inside the source pod's network namespace (nsenter into a process of
 * the pod, found by its cgroup), so the packets are the pod's own.
 *
 * Which flows are declared is computed from the cluster's NetworkPolicies with the API's semantics
 * (allowed(): a pod selected by a policy of a type is isolated for that type; the union of the
 * selecting policies' rules lets traffic through; both ends must allow it).
 */
import * as fs from "node:fs";
import type { Context, StepIO } from "../harness/context";
import { NODE_NAME, podPid } from "./realnodePod";
import { startUpstream } from "./realnode";

type Labels = Record<string, string>;
interface Selector { matchLabels?: Labels; matchExpressions?: Array<{ key: string; operator: string; values?: string[] }> }
interface Peer { podSelector?: Selector; namespaceSelector?: Selector; ipBlock?: { cidr: string; except?: string[] } }
interface Rule { ports?: Array<{ port?: number | string; protocol?: string; endPort?: number }>; from?: Peer[]; to?: Peer[] }
export interface Policy { metadata: { name: string; namespace: string }; spec: { podSelector: Selector; policyTypes?: string[]; ingress?: Rule[]; egress?: Rule[] } }
export interface PodInfo { namespace: string; name: string; uid: string; labels: Labels; ip?: string; node?: string; ready: boolean }
export interface Endpoint { pod?: PodInfo; ip: string }

export function matches(sel: Selector | undefined, labels: Labels): boolean {
    if (!sel) return true;
    for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
    for (const e of sel.matchExpressions ?? []) {
        const has = k(e.key);
        if (e.operator === "In" && !(has && e.values!.includes(labels[e.key]))) return false;
        if (e.operator === "NotIn" && has && e.values!.includes(labels[e.key])) return false;
        if (e.operator === "Exists" && !has) return false;
        if (e.operator === "DoesNotExist" && has) return false;
    }
    return true;
    function k(key: string) { return Object.prototype.hasOwnProperty.call(labels, key); }
}

const ipNum = (ip: string) => ip.split(".").reduce((n, o) => n * 256 + Number(o), 0);
export function inCidr(ip: string, cidr: string): boolean {
    const [base, bits] = cidr.split("/");
    const m = Number(bits) === 0 ? 0 : (~0 << (32 - Number(bits))) >>> 0;
    return ((ipNum(ip) & m) >>> 0) === ((ipNum(base) & m) >>> 0);
}

function peerMatches(peer: Peer, policyNs: string, other: Endpoint, nsLabels: Map<string, Labels>): boolean {
    if (peer.ipBlock) return !other.pod && inCidr(other.ip, peer.ipBlock.cidr) && !(peer.ipBlock.except ?? []).some((c) => inCidr(other.ip, c));
    if (!other.pod) return false;
    const nsOk = peer.namespaceSelector ? matches(peer.namespaceSelector, nsLabels.get(other.pod.namespace) ?? {}) : other.pod.namespace === policyNs;
    return nsOk && matches(peer.podSelector, other.pod.labels);
}

function portMatches(rule: Rule, port: number, protocol: string): boolean {
    if (!rule.ports?.length) return true;
    return rule.ports.some((p) => (p.protocol ?? "TCP") === protocol && (p.port === undefined || (typeof p.port === "number" ? (p.endPort ? port >= p.port && port <= p.endPort : p.port === port) : false)));
}

const types = (p: Policy) => p.spec.policyTypes ?? ["Ingress", ...(p.spec.egress ? ["Egress"] : [])];

/** Whether the cluster's policies let `from` reach `to` on port/protocol (both ends). */
export function allowed(policies: Policy[], nsLabels: Map<string, Labels>, from: Endpoint, to: Endpoint, port: number, protocol = "TCP"): boolean {
    const side = (pod: PodInfo | undefined, type: "Ingress" | "Egress", other: Endpoint) => {
        if (!pod) return true;
        const sel = policies.filter((p) => p.metadata.namespace === pod.namespace && types(p).includes(type) && matches(p.spec.podSelector, pod.labels));
        if (!sel.length) return true;
        return sel.some((p) => (type === "Ingress" ? p.spec.ingress : p.spec.egress)?.some((r) => portMatches(r, port, protocol) && ((type === "Ingress" ? r.from : r.to) === undefined || (type === "Ingress" ? r.from : r.to)!.some((peer) => peerMatches(peer, p.metadata.namespace, other, nsLabels)))));
    };
    return side(from.pod, "Egress", to) && side(to.pod, "Ingress", from);
}

interface DeclaredPolicy { policy: string; namespace: string; podSelector: Labels; ingress: Array<{ description: string; peers: Peer[]; ports: Array<{ port: number; protocol: string }> }>; egress: Array<{ description: string; peers: Peer[]; ports: Array<{ port: number; protocol: string }> }> }

export interface Flow { what: string; from: Endpoint; to: Endpoint; port: number; protocol: string }

const name = (e: Endpoint) => (e.pod ? `${e.pod.namespace}/${e.pod.name}` : e.ip);

/**
 * The declared flows between running pods (and to the "internet" address): for each declared
 * egress rule one source pod of the policy and one destination pod of each peer, for each
 * ingress rule one source pod of each peer; TCP ports (DNS over TCP for port 53). Declared flows
 * whose other end has no pod on this cluster (the add-ons' namespaces, the gateway) are listed as
 * such, with the reason.
 */
export function declaredFlows(declared: DeclaredPolicy[], pods: PodInfo[], nsLabels: Map<string, Labels>, internetIp: string): { flows: Flow[]; unmatched: string[] } {
    const flows: Flow[] = [];
    const unmatched: string[] = [];
    const seen = new Set<string>();
    const add = (f: Flow) => {
        const key = `${name(f.from)}>${name(f.to)}:${f.port}`;
        if (!seen.has(key)) (seen.add(key), flows.push(f));
    };
    const podsOf = (peer: Peer, ns: string) => pods.filter((p) => p.ip && peerMatches(peer, ns, { pod: p, ip: p.ip }, nsLabels));
    for (const d of declared) {
        const selected = pods.filter((p) => p.namespace === d.namespace && p.ip && matches({ matchLabels: d.podSelector }, p.labels));
        if (!selected.length) {
            unmatched.push(`${d.namespace}/${d.policy}: no running pod on this cluster`);
            continue;
        }
        for (const [dir, rules] of [["egress", d.egress], ["ingress", d.ingress]] as const) {
            for (const r of rules ?? []) {
                for (const port of r.ports.filter((p) => p.protocol === "TCP" || p.port === 53)) {
                    for (const peer of r.peers) {
                        if (peer.ipBlock) {
                            if (dir === "egress" && port.port === 443) add({ what: `${d.namespace}/${d.policy} egress "${r.description}"`, from: { pod: selected[0], ip: selected[0].ip! }, to: { ip: internetIp }, port: 443, protocol: "TCP" });
                            else unmatched.push(`${d.namespace}/${d.policy} ${dir} "${r.description}" port ${port.port}: no server at an address of ${peer.ipBlock.cidr} here`);
                            continue;
                        }
                        const others = podsOf(peer, d.namespace).filter((p) => p.ready);
                        if (!others.length) {
                            unmatched.push(`${d.namespace}/${d.policy} ${dir} "${r.description}" port ${port.port}: no running pod matches the peer`);
                            continue;
                        }
                        const me = selected[0];
                        const other = others[0];
                        const [from, to] = dir === "egress" ? [me, other] : [other, me];
                        add({ what: `${d.namespace}/${d.policy} ${dir} "${r.description}"`, from: { pod: from, ip: from.ip! }, to: { pod: to, ip: to.ip! }, port: port.port, protocol: "TCP" });
                    }
                }
            }
        }
    }
    return { flows, unmatched };
}

/** Tries a TCP connection from inside a pod's network namespace; true when it was established within `seconds`. */
export async function connects(ctx: Context, pod: PodInfo, ip: string, port: number, seconds = 4): Promise<boolean> {
    const pid = podPid(pod.uid);
    if (!pid) throw new Error(`no process of pod ${pod.namespace}/${pod.name} (uid ${pod.uid}) found in the node's cgroups`);
    const r = await ctx.run("nsenter", [`--net=/proc/${pid}/ns/net`, "timeout", String(seconds), "bash", "-c", `exec 3<>/dev/tcp/${ip}/${port}`], { allowFail: true, quiet: true });
    return r.code === 0;
}

export async function podsOnCluster(ctx: Context): Promise<{ pods: PodInfo[]; nsLabels: Map<string, Labels>; policies: Policy[] }> {
    const pods = (await ctx.kubectlJson<{ items: any[] }>(["get", "pods", "-A"])).items
        .filter((p) => p.status?.phase === "Running")
        .map((p): PodInfo => ({ namespace: p.metadata.namespace, name: p.metadata.name, uid: p.metadata.uid, labels: p.metadata.labels ?? {}, ip: p.status.podIP, node: p.spec.nodeName, ready: (p.status.conditions ?? []).some((c: any) => c.type === "Ready" && c.status === "True") }));
    const nsLabels = new Map<string, Labels>((await ctx.kubectlJson<{ items: any[] }>(["get", "namespaces"])).items.map((n) => [n.metadata.name, n.metadata.labels ?? {}]));
    const policies = (await ctx.kubectlJson<{ items: Policy[] }>(["get", "networkpolicies", "-A"])).items;
    return { pods, nsLabels, policies };
}

/** The listening workloads a refused sample aims at: the data stores, the agent server, the bridge, the applications. */
const TARGETS: Array<{ namespace: string; labels: Labels; port: number; what: string }> = [
    { namespace: "data", labels: { "app.kubernetes.io/name": "postgres", "app.kubernetes.io/component": "database" }, port: 5432, what: "PostgreSQL" },
    { namespace: "data", labels: { "app.kubernetes.io/name": "redis", "app.kubernetes.io/component": "cache" }, port: 6379, what: "Redis" },
    { namespace: "data", labels: { "app.kubernetes.io/name": "object-store", "app.kubernetes.io/component": "object-store" }, port: 9000, what: "the object store" },
    { namespace: "agent", labels: { "app.kubernetes.io/instance": "agent-server-4000" }, port: 4000, what: "the agent server" },
    { namespace: "agent", labels: { "app.kubernetes.io/name": "model-bridge" }, port: 3100, what: "the model bridge" },
    { namespace: "workflow", labels: { "app.kubernetes.io/instance": "workflow-main" }, port: 5678, what: "the workflow tool" },
    { namespace: "booking", labels: { "app.kubernetes.io/name": "booking", "app.kubernetes.io/component": "server" }, port: 8080, what: "the booking application" },
];

/**
 * Undeclared flows to refuse: from one running pod of each namespace to each target above that no
 * policy allows it to reach (allowed() on the cluster's policies), at most `perNamespace` each.
 */
export function undeclaredSample(pods: PodInfo[], policies: Policy[], nsLabels: Map<string, Labels>, perNamespace = 4): Flow[] {
    const out: Flow[] = [];
    const namespaces = [...new Set(pods.map((p) => p.namespace))].sort();
    for (const ns of namespaces) {
        const from = pods.filter((p) => p.namespace === ns && p.ready && p.ip).sort((a, b) => a.name.localeCompare(b.name))[0];
        if (!from) continue;
        let n = 0;
        for (const t of TARGETS) {
            const to = pods.find((p) => p.namespace === t.namespace && p.ready && p.ip && matches({ matchLabels: t.labels }, p.labels));
            if (!to || to.uid === from.uid || n >= perNamespace) continue;
            if (allowed(policies, nsLabels, { pod: from, ip: from.ip! }, { pod: to, ip: to.ip! }, t.port)) continue;
            out.push({ what: `${t.what} from ${ns === t.namespace ? "its own namespace, an undeclared pod" : `namespace ${ns}`}`, from: { pod: from, ip: from.ip! }, to: { pod: to, ip: to.ip! }, port: t.port, protocol: "TCP" });
            n += 1;
        }
    }
    return out;
}

export const flowName = (f: Flow) => `${name(f.from)} -> ${name(f.to)}:${f.port}`;

async function realPods(ctx: Context) {
    const c = await podsOnCluster(ctx);
    return { ...c, pods: c.pods.filter((p) => p.node === NODE_NAME) };
}

/** Every declared flow between the real node's pods (and to the "internet") connects. */
export async function declaredStep(ctx: Context, io: StepIO): Promise<void> {
    // The "internet" end of the egress rules: the fake model API (steps/realnode.ts).
    await startUpstream();
    const { pods, nsLabels } = await realPods(ctx);
    const declared = JSON.parse(fs.readFileSync(ctx.path("render/explain/declared-flows.json"), "utf8")) as DeclaredPolicy[];
    const { flows, unmatched } = declaredFlows(declared, pods, nsLabels, process.env.E2E_INTERNET_IP ?? "");
    const failed: string[] = [];
    for (const f of flows) {
        const ok = await connects(ctx, f.from.pod!, f.to.ip, f.port);
        io.result(`declared flow ${ok ? "ok  " : "FAIL"} ${flowName(f)} (${f.what})`);
        if (!ok) failed.push(flowName(f));
    }
    for (const u of unmatched) io.result(`declared flow skip ${u}`);
    io.result(`${flows.length} declared flows tried, ${flows.length - failed.length} connected, ${failed.length} failed; ${unmatched.length} not tried (reasons above)`);
    if (failed.length) throw new Error(`declared flows that did not connect: ${failed.join(", ")}`);
}

/** A sample of undeclared flows per namespace is refused (and the targets do listen: their declared flows connected). */
export async function refusedStep(ctx: Context, io: StepIO): Promise<void> {
    const { pods, nsLabels, policies } = await realPods(ctx);
    const sample = undeclaredSample(pods, policies, nsLabels);
    if (!sample.length) throw new Error("no undeclared flow to try: no pods?");
    const through: string[] = [];
    for (const f of sample) {
        const ok = await connects(ctx, f.from.pod!, f.to.ip, f.port, 3);
        io.result(`refused flow ${ok ? "FAIL (connected)" : "ok  "} ${flowName(f)} (${f.what})`);
        if (ok) through.push(flowName(f));
    }
    io.result(`${sample.length} undeclared flows tried from ${new Set(sample.map((f) => f.from.pod!.namespace)).size} namespaces, ${sample.length - through.length} refused`);
    if (through.length) throw new Error(`undeclared flows that connected: ${through.join(", ")}`);
}
