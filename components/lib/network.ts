/**
 * Intent-level network policy: a workload says whom it accepts traffic from and whom it talks to;
 * the NetworkPolicy that allows exactly those flows (and nothing else) follows.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

type PolicyPeer = k8s.types.input.networking.v1.NetworkPolicyPeer;

export interface PortSpec {
    port: number | string;
    protocol?: "TCP" | "UDP";
}

/** A set of pods (or addresses) on the other side of a flow. */
export interface Peer {
    readonly description: string;
    readonly peers: PolicyPeer[];
}

const NAMESPACE_NAME = "kubernetes.io/metadata.name";

export function podsIn(namespace: string, selector: Record<string, string>, description?: string): Peer {
    return {
        description: description ?? `pods ${JSON.stringify(selector)} in ${namespace}`,
        peers: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME]: namespace } }, podSelector: { matchLabels: selector } }],
    };
}

export function namespace(name: string): Peer {
    return { description: `any pod in ${name}`, peers: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME]: name } } }] };
}

/** The ingress controller's pods: the only way in for web front ends. */
export function ingressController(controllerNamespace: string): Peer {
    return namespace(controllerNamespace);
}

/** Cluster DNS (kube-system, kube-dns / CoreDNS pods). */
export const clusterDns: Peer = {
    description: "cluster DNS",
    peers: [{ namespaceSelector: { matchLabels: { [NAMESPACE_NAME]: "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }],
};
export const DNS_PORTS: PortSpec[] = [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }];

/** Addresses outside the cluster (model providers, identity providers, chart and git hosts). */
export function internet(exceptPrivate = true): Peer {
    return {
        description: "the internet",
        peers: [{ ipBlock: { cidr: "0.0.0.0/0", except: exceptPrivate ? ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16"] : undefined } }],
    };
}

export interface Flow {
    peer: Peer;
    ports: PortSpec[];
}

export interface FlowsArgs {
    namespace: string;
    /** The pods this policy governs. */
    podSelector: Record<string, string>;
    labels: Record<string, string>;
    /** Who may connect to these pods. */
    ingress: Flow[];
    /** Whom these pods may connect to; DNS is always added. */
    egress: Flow[];
}

const toPorts = (ports: PortSpec[]) => ports.map((p) => ({ port: p.port, protocol: p.protocol ?? "TCP" }));

/**
 * The flows every allowOnly call of this program run declared, by policy: the side channel
 * `npm run explain` compares with what the NetworkPolicies actually allow (no secrets: selectors,
 * addresses and ports only). index.ts resets it at the start of a run and writes it as a rendered file.
 */
export interface DeclaredFlowsRecord {
    policy: string;
    namespace: string;
    podSelector: Record<string, string>;
    ingress: Array<{ description: string; peers: PolicyPeer[]; ports: Array<{ port: number | string; protocol: string }> }>;
    egress: Array<{ description: string; peers: PolicyPeer[]; ports: Array<{ port: number | string; protocol: string }> }>;
}

const declared = new Map<string, DeclaredFlowsRecord>();

/** Where the render writes the declarations (relative to its output folder). */
export const DECLARED_FLOWS_FILE = "explain/declared-flows.json";

export function resetDeclaredFlows(): void {
    declared.clear();
}

/** The declarations as stable JSON; an unresolved (Output) value in a declaration is an error. */
export function declaredFlowsJson(): string {
    const records = [...declared.values()].sort((a, b) => (`${a.namespace}/${a.policy}` < `${b.namespace}/${b.policy}` ? -1 : 1));
    return JSON.stringify(records, (key, value) => {
        if (pulumi.Output.isInstance(value)) throw new Error(`declared network flows: ${key} is not a plain value (an Output); declare flows with plain selectors`);
        return value;
    }, 2) + "\n";
}

/** A NetworkPolicy that allows exactly the given flows, in both directions. */
export function allowOnly(name: string, args: FlowsArgs, opts: pulumi.CustomResourceOptions): k8s.networking.v1.NetworkPolicy {
    const egress = [{ peer: clusterDns, ports: DNS_PORTS }, ...args.egress];
    const record = (f: Flow) => ({ description: f.peer.description, peers: f.peer.peers, ports: toPorts(f.ports) });
    declared.set(`${args.namespace}/${name}`, { policy: name, namespace: args.namespace, podSelector: args.podSelector, ingress: args.ingress.map(record), egress: egress.map(record) });
    return new k8s.networking.v1.NetworkPolicy(name, {
        metadata: { name, namespace: args.namespace, labels: args.labels },
        spec: withoutEmpty({
            podSelector: { matchLabels: args.podSelector },
            policyTypes: ["Ingress", "Egress"],
            ingress: args.ingress.map((f) => ({ from: f.peer.peers, ports: toPorts(f.ports) })),
            egress: egress.map((f) => ({ to: f.peer.peers, ports: toPorts(f.ports) })),
        }),
    }, opts);
}

/**
 * The API server stores an empty list (ingress, from, ports) or an empty matchLabels as absent, so
 * an object that sends them differs from what the server returns and every apply rewrites it (seen
 * on the e2e control plane). Absent means the same here: policyTypes keeps an absent ingress a
 * deny-all, and an absent from/ports/matchLabels matches everything, as the empty one does.
 */
function withoutEmpty<T>(value: T): T {
    if (Array.isArray(value)) return value.map(withoutEmpty) as T;
    if (value === null || typeof value !== "object" || pulumi.Output.isInstance(value)) return value;
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
        const empty = (Array.isArray(v) && v.length === 0) || (k === "matchLabels" && v !== null && typeof v === "object" && Object.keys(v).length === 0);
        if (!empty) out[k] = withoutEmpty(v);
    }
    return out as T;
}
