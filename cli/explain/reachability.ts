/**
 * Reachability (specification section 2.5): which endpoints can open connections to which, on
 * which ports, from every NetworkPolicy of a stack. A pod selected by no policy of a direction is
 * open in that direction; a pod selected by one or more is denied everything their rules do not
 * allow, and several policies combine as a union of allows. A connection needs the source's egress
 * and the destination's ingress. The flows the components declare (components/lib/network.ts) are
 * compared with the result: open but not needed, needed but closed.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { Workload } from "./workloads";

export type Protocol = "TCP" | "UDP" | "SCTP";

/** A set of ports: every port, or some "port/PROTOCOL" keys. */
export interface PortSet {
    all: boolean;
    ports: Set<string>;
}

export interface ListeningPort {
    port: number;
    protocol: Protocol;
    name?: string;
}

export interface Endpoint {
    id: string;
    kind: "workload" | "chart" | "dns" | "internet";
    /** Pods only. */
    namespace?: string;
    labels: Record<string, string>;
    /** External endpoints: a representative address. */
    ip?: string;
    /** Declared container ports; undefined when not known (chart pods, the internet). */
    listening?: ListeningPort[];
}

export interface Selector {
    matchLabels?: Record<string, string>;
    matchExpressions?: Array<{ key: string; operator: string; values?: string[] }>;
}

export interface PolicyPeer {
    podSelector?: Selector;
    namespaceSelector?: Selector;
    ipBlock?: { cidr: string; except?: string[] };
}

export interface PolicyPort {
    port?: number | string;
    endPort?: number;
    protocol?: string;
}

/** A declared flow (components/lib/network.ts Flow, recorded by the render). */
export interface DeclaredFlow {
    description: string;
    peers: PolicyPeer[];
    ports: PolicyPort[];
}

/** What one allowOnly call declared: the pods it governs and the flows they need. */
export interface DeclaredFlows {
    policy: string;
    namespace: string;
    podSelector: Record<string, string>;
    ingress: DeclaredFlow[];
    egress: DeclaredFlow[];
}

export interface Flow {
    from: string;
    to: string;
    /** "port/PROTOCOL" keys, or ["any"] for every port. */
    ports: string[];
}

export interface FlowDifference {
    from: string;
    to: string;
    ports: string[];
    /** What the declarations say about the pair (for the reader). */
    why: string;
}

export interface Reachability {
    endpoints: string[];
    open: Flow[];
    /** Present when declarations were available. */
    declared?: { openNotNeeded: FlowDifference[]; neededClosed: FlowDifference[] };
    /** Workloads selected by no policy in a direction (open to everything that way). */
    unselected: Array<{ endpoint: string; direction: "ingress" | "egress" }>;
}

export const INTERNET_ADDRESS = "203.0.113.10";
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";
export const DNS_ENDPOINT = "kube-system/cluster-dns";
export const INTERNET_ENDPOINT = "internet";

// ---- port sets ----

const NONE = (): PortSet => ({ all: false, ports: new Set() });
const ALL = (): PortSet => ({ all: true, ports: new Set() });

export function union(a: PortSet, b: PortSet): PortSet {
    if (a.all || b.all) return ALL();
    return { all: false, ports: new Set([...a.ports, ...b.ports]) };
}

export function intersect(a: PortSet, b: PortSet): PortSet {
    if (a.all) return b.all ? ALL() : { all: false, ports: new Set(b.ports) };
    if (b.all) return { all: false, ports: new Set(a.ports) };
    return { all: false, ports: new Set([...a.ports].filter((p) => b.ports.has(p))) };
}

/** a without b; "every port but some" is shown as "any" (the reader sees the ports that are needed). */
export function minus(a: PortSet, b: PortSet): PortSet {
    if (b.all) return NONE();
    if (a.all) return ALL();
    return { all: false, ports: new Set([...a.ports].filter((p) => !b.ports.has(p))) };
}

const isEmpty = (s: PortSet) => !s.all && s.ports.size === 0;

const portOrder = (k: string) => [Number(k.split("/")[0]), k];
export function portList(s: PortSet): string[] {
    if (s.all) return ["any"];
    return [...s.ports].sort((x, y) => {
        const [a, ka] = portOrder(x);
        const [b, kb] = portOrder(y);
        return a !== b ? (a as number) - (b as number) : ka < kb ? -1 : 1;
    });
}

/** The ports of a rule against a destination (named ports resolve to its container ports). */
function rulePorts(ports: PolicyPort[] | undefined, dst: Endpoint): PortSet {
    if (!ports || ports.length === 0) return ALL();
    const out = new Set<string>();
    let all = false;
    for (const p of ports) {
        const protocol = (p.protocol ?? "TCP").toUpperCase();
        if (p.port === undefined) {
            // Every port of the protocol: the destination's ports of that protocol, or any.
            if (dst.listening) dst.listening.filter((l) => l.protocol === protocol).forEach((l) => out.add(`${l.port}/${protocol}`));
            else all = true;
        } else if (typeof p.port === "number" || /^\d+$/.test(String(p.port))) {
            const first = Number(p.port);
            const last = p.endPort ?? first;
            if (dst.listening) dst.listening.filter((l) => l.protocol === protocol && l.port >= first && l.port <= last).forEach((l) => out.add(`${l.port}/${protocol}`));
            else for (let n = first; n <= Math.min(last, first + 64); n++) out.add(`${n}/${protocol}`);
        } else {
            for (const l of dst.listening ?? []) if (l.name === p.port && l.protocol === protocol) out.add(`${l.port}/${protocol}`);
        }
    }
    return all ? ALL() : { all: false, ports: out };
}

/** What a destination listens on: its container ports, or anything when not known. */
function listeningSet(dst: Endpoint): PortSet {
    if (!dst.listening) return ALL();
    return { all: false, ports: new Set(dst.listening.map((l) => `${l.port}/${l.protocol}`)) };
}

// ---- selectors and peers ----

export function selectorMatches(sel: Selector | undefined, labels: Record<string, string>): boolean {
    if (!sel) return true;
    for (const [k, v] of Object.entries(sel.matchLabels ?? {})) if (labels[k] !== v) return false;
    for (const e of sel.matchExpressions ?? []) {
        const has = Object.prototype.hasOwnProperty.call(labels, e.key);
        const values = e.values ?? [];
        if (e.operator === "In" && !(has && values.includes(labels[e.key]))) return false;
        if (e.operator === "NotIn" && has && values.includes(labels[e.key])) return false;
        if (e.operator === "Exists" && !has) return false;
        if (e.operator === "DoesNotExist" && has) return false;
    }
    return true;
}

function ipv4(addr: string): number {
    const parts = addr.split(".").map(Number);
    if (parts.length !== 4 || parts.some((p) => !(p >= 0 && p <= 255))) throw new Error(`not an IPv4 address: ${addr}`);
    return ((parts[0] << 24) >>> 0) + (parts[1] << 16) + (parts[2] << 8) + parts[3];
}

export function cidrContains(cidr: string, addr: string): boolean {
    if (cidr.includes(":")) return false;
    const [base, bits] = cidr.split("/");
    const n = Number(bits ?? 32);
    const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
    return ((ipv4(base) & mask) >>> 0) === ((ipv4(addr) & mask) >>> 0);
}

export type NamespaceLabels = (namespace: string) => Record<string, string>;

/** A peer of a policy in `policyNamespace` against an endpoint; ipBlocks match only addresses outside the cluster. */
export function peerMatches(peer: PolicyPeer, policyNamespace: string, e: Endpoint, nsLabels: NamespaceLabels): boolean {
    if (peer.ipBlock) return e.ip !== undefined && cidrContains(peer.ipBlock.cidr, e.ip) && !(peer.ipBlock.except ?? []).some((x) => cidrContains(x, e.ip!));
    if (e.namespace === undefined) return false;
    if (peer.namespaceSelector) {
        if (!selectorMatches(peer.namespaceSelector, nsLabels(e.namespace))) return false;
    } else if (e.namespace !== policyNamespace) return false;
    return selectorMatches(peer.podSelector, e.labels);
}

// ---- policies ----

interface Policy {
    name: string;
    namespace: string;
    podSelector: Selector;
    types: Set<"Ingress" | "Egress">;
    ingress: Array<{ peers?: PolicyPeer[]; ports?: PolicyPort[] }>;
    egress: Array<{ peers?: PolicyPeer[]; ports?: PolicyPort[] }>;
}

function policiesOf(objects: K8sObject[]): Policy[] {
    return objects.filter((o) => o.kind === "NetworkPolicy").map((o) => {
        const spec = o.spec ?? {};
        const types: Array<"Ingress" | "Egress"> = spec.policyTypes ?? ["Ingress", ...(spec.egress ? ["Egress" as const] : [])];
        return {
            name: `${o.metadata?.namespace ?? "default"}/${o.metadata?.name}`,
            namespace: o.metadata?.namespace ?? "default",
            podSelector: spec.podSelector ?? {},
            types: new Set(types),
            ingress: (spec.ingress ?? []).map((r: any) => ({ peers: r.from, ports: r.ports })),
            egress: (spec.egress ?? []).map((r: any) => ({ peers: r.to, ports: r.ports })),
        };
    });
}

const selects = (p: { namespace: string; podSelector: Selector }, e: Endpoint) => e.namespace === p.namespace && selectorMatches(p.podSelector, e.labels);

/** The ports `self` allows towards (egress) or from (ingress) `other`: the union of the selecting policies' rules. */
function allowed(policies: Policy[], direction: "Ingress" | "Egress", self: Endpoint, other: Endpoint, dst: Endpoint, nsLabels: NamespaceLabels): { selected: boolean; ports: PortSet } {
    const selecting = policies.filter((p) => p.types.has(direction) && selects(p, self));
    if (selecting.length === 0) return { selected: false, ports: ALL() };
    let ports = NONE();
    for (const p of selecting) {
        for (const rule of direction === "Ingress" ? p.ingress : p.egress) {
            const peerOk = !rule.peers || rule.peers.length === 0 || rule.peers.some((peer) => peerMatches(peer, p.namespace, other, nsLabels));
            if (peerOk) ports = union(ports, rulePorts(rule.ports, dst));
        }
    }
    return { selected: true, ports };
}

/** The ports on which `src` can open connections to `dst`. */
export function openPorts(policies: Policy[], src: Endpoint, dst: Endpoint, nsLabels: NamespaceLabels): PortSet {
    // Policies govern pods only: the internet has no egress policy, and nothing is enforced on it.
    const egress = src.namespace === undefined ? ALL() : allowed(policies, "Egress", src, dst, dst, nsLabels).ports;
    const ingress = dst.namespace === undefined ? ALL() : allowed(policies, "Ingress", dst, src, dst, nsLabels).ports;
    return intersect(intersect(egress, ingress), listeningSet(dst));
}

// ---- endpoints ----

function containerPorts(podSpec: any): ListeningPort[] {
    const out: ListeningPort[] = [];
    for (const c of [...(podSpec?.initContainers ?? []), ...(podSpec?.containers ?? [])])
        for (const p of c.ports ?? []) out.push({ port: Number(p.containerPort), protocol: (p.protocol ?? "TCP").toUpperCase(), name: p.name });
    return out;
}

/**
 * The endpoints of a stack: every workload, the pods of each namespace whose workloads are not
 * objects of the render (charts: the ingress controller, cert-manager, ...), cluster DNS and the internet.
 */
export function endpointsOf(objects: K8sObject[], workloads: Workload[]): Endpoint[] {
    const out: Endpoint[] = workloads.map((w) => {
        const ports = containerPorts(w.podSpec);
        // Jobs run to completion and serve nothing; other pods without declared ports may listen anywhere.
        const runsToCompletion = w.kind === "Job" || w.kind === "CronJob";
        return { id: w.id, kind: "workload" as const, namespace: w.namespace, labels: w.podLabels, listening: ports.length > 0 || runsToCompletion ? ports : undefined };
    });
    const withWorkloads = new Set(workloads.map((w) => w.namespace));
    // Pods the render does not hold (charts): a namespace without workloads of its own, or one whose
    // namespace-wide policy allows more than DNS (e.g. Argo CD beside the source-mirror CronJobs).
    const toDnsOnly = (rule: any) => (rule.to ?? []).length > 0 && (rule.to ?? []).every((p: PolicyPeer) => p.podSelector?.matchLabels?.["k8s-app"] === "kube-dns");
    const namespaceWide = (o: K8sObject) => selectorIsEmpty(o.spec?.podSelector ?? {}) && ((o.spec?.ingress ?? []).length > 0 || (o.spec?.egress ?? []).some((r: any) => !toDnsOnly(r)));
    const chartNamespaces = new Set(objects.filter((o) => o.kind === "NetworkPolicy" && (!withWorkloads.has(o.metadata?.namespace ?? "") || namespaceWide(o))).map((o) => o.metadata!.namespace!));
    for (const ns of [...chartNamespaces].sort()) out.push({ id: `${ns}/(chart pods)`, kind: "chart", namespace: ns, labels: {} });
    out.push({ id: DNS_ENDPOINT, kind: "dns", namespace: "kube-system", labels: { "k8s-app": "kube-dns" }, listening: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] });
    out.push({ id: INTERNET_ENDPOINT, kind: "internet", labels: {}, ip: INTERNET_ADDRESS });
    return out;
}

export function namespaceLabelsOf(objects: K8sObject[]): NamespaceLabels {
    const labels = new Map<string, Record<string, string>>();
    for (const o of objects.filter((x) => x.kind === "Namespace")) labels.set(o.metadata!.name!, o.metadata?.labels ?? {});
    return (ns) => ({ ...(labels.get(ns) ?? {}), [NAMESPACE_NAME_LABEL]: ns });
}

// ---- declarations ----

/** A declaration names its peer specifically unless it is "any pod of any namespace". */
const broad = (peer: PolicyPeer) => !peer.ipBlock && !peer.podSelector && peer.namespaceSelector !== undefined && selectorIsEmpty(peer.namespaceSelector);
const selectorIsEmpty = (s: Selector) => Object.keys(s.matchLabels ?? {}).length === 0 && (s.matchExpressions ?? []).length === 0;

/** The ports the declarations need (specific peers) and tolerate (any pod anywhere) from src to dst. */
function declaredPorts(declared: DeclaredFlows[], src: Endpoint, dst: Endpoint, nsLabels: NamespaceLabels): { needed: PortSet; tolerated: PortSet; by: string[] } {
    let needed = NONE();
    let tolerated = NONE();
    const by: string[] = [];
    const add = (flows: DeclaredFlow[], ns: string, other: Endpoint, side: string) => {
        for (const f of flows) {
            const matching = f.peers.filter((p) => peerMatches(p, ns, other, nsLabels));
            if (matching.length === 0) continue;
            const ports = intersect(rulePorts(f.ports, dst), listeningSet(dst));
            if (matching.some((p) => !broad(p))) {
                needed = union(needed, ports);
                by.push(`${side}: ${f.description}`);
            } else tolerated = union(tolerated, ports);
        }
    };
    for (const d of declared) {
        const sel = { namespace: d.namespace, podSelector: { matchLabels: d.podSelector } };
        if (selects(sel, src)) add(d.egress, d.namespace, dst, `${d.policy} egress`);
        if (selects(sel, dst)) add(d.ingress, d.namespace, src, `${d.policy} ingress`);
    }
    return { needed, tolerated, by };
}

export interface ReachabilityOptions {
    /** Every pod resolves names: DNS is needed by all, declared or not. */
    dnsAlwaysNeeded?: boolean;
}

export function reachability(objects: K8sObject[], workloads: Workload[], declared?: DeclaredFlows[], options: ReachabilityOptions = {}): Reachability {
    const policies = policiesOf(objects);
    const nsLabels = namespaceLabelsOf(objects);
    const endpoints = endpointsOf(objects, workloads);
    const open: Flow[] = [];
    const openNotNeeded: FlowDifference[] = [];
    const neededClosed: FlowDifference[] = [];
    for (const src of endpoints) {
        for (const dst of endpoints) {
            // Cluster DNS answers but opens no connections; the internet to itself is not ours.
            if (src.kind === "dns" || (src.kind === "internet" && dst.kind === "internet")) continue;
            const ports = openPorts(policies, src, dst, nsLabels);
            if (!isEmpty(ports)) open.push({ from: src.id, to: dst.id, ports: portList(ports) });
            if (!declared) continue;
            const d = declaredPorts(declared, src, dst, nsLabels);
            if (dst.kind === "dns" && options.dnsAlwaysNeeded !== false) d.needed = union(d.needed, listeningSet(dst));
            const surplus = minus(minus(ports, d.needed), d.tolerated);
            if (!isEmpty(surplus)) openNotNeeded.push({ from: src.id, to: dst.id, ports: portList(surplus), why: d.by.length ? `declared only ${portList(d.needed).join(", ")} (${d.by.join("; ")})` : "no component declares this flow" });
            const missing = minus(d.needed, ports);
            if (!isEmpty(missing)) neededClosed.push({ from: src.id, to: dst.id, ports: portList(missing), why: d.by.join("; ") || "DNS" });
        }
    }
    const unselected: Reachability["unselected"] = [];
    for (const e of endpoints.filter((x) => x.kind === "workload" || x.kind === "chart")) {
        if (!policies.some((p) => p.types.has("Ingress") && selects(p, e))) unselected.push({ endpoint: e.id, direction: "ingress" });
        if (!policies.some((p) => p.types.has("Egress") && selects(p, e))) unselected.push({ endpoint: e.id, direction: "egress" });
    }
    return { endpoints: endpoints.map((e) => e.id), open, declared: declared ? { openNotNeeded, neededClosed } : undefined, unselected };
}
