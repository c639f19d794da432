/**
 * The real node's NetworkPolicy judge (steps/realnodeFlows.ts), against the API's semantics
 * (networking.k8s.io/v1 NetworkPolicy docs): which flows the e2e expects to connect and which to be refused.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import { allowed, declaredFlows, inCidr, undeclaredSample, type PodInfo, type Policy } from "./steps/realnodeFlows";

const pod = (namespace: string, name: string, labels: Record<string, string>, ip: string): PodInfo => ({ namespace, name, uid: name, labels, ip, node: "e2e-node", ready: true });
const ns = new Map(["data", "agent", "booking", "kube-system"].map((n) => [n, { "kubernetes.io/metadata.name": n }]));
const pg = pod("data", "postgres-0", { "app.kubernetes.io/name": "postgres", "app.kubernetes.io/component": "database" }, "10.244.0.10");
const bridge = pod("agent", "bridge", { "app.kubernetes.io/name": "model-bridge" }, "10.244.0.11");
const booking = pod("booking", "booking", { "app.kubernetes.io/name": "booking", "app.kubernetes.io/component": "server" }, "10.244.0.12");
const dns = pod("kube-system", "coredns", { "k8s-app": "kube-dns" }, "10.244.0.13");
const e = (p: PodInfo) => ({ pod: p, ip: p.ip! });

const policies: Policy[] = [
    // PostgreSQL: ingress from the bridge's namespace only, on 5432 (no egress field: ingress-only).
    { metadata: { name: "postgres", namespace: "data" }, spec: { podSelector: { matchLabels: { "app.kubernetes.io/name": "postgres" } }, ingress: [{ from: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "agent" } } }], ports: [{ port: 5432, protocol: "TCP" }] }] } },
    // booking: egress to DNS and the internet (not private ranges) on 443 only.
    {
        metadata: { name: "booking", namespace: "booking" },
        spec: {
            podSelector: {}, policyTypes: ["Ingress", "Egress"],
            egress: [
                { to: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ port: 53, protocol: "TCP" }] },
                { to: [{ ipBlock: { cidr: "0.0.0.0/0", except: ["10.0.0.0/8"] } }], ports: [{ port: 443, protocol: "TCP" }] },
            ],
        },
    },
];

test("inCidr: prefix lengths 0, 8, 32", () => {
    assert.ok(inCidr("203.0.113.10", "0.0.0.0/0"));
    assert.ok(inCidr("10.244.0.1", "10.0.0.0/8"));
    assert.ok(!inCidr("11.0.0.1", "10.0.0.0/8"));
    assert.ok(inCidr("203.0.113.10", "203.0.113.10/32") && !inCidr("203.0.113.11", "203.0.113.10/32"));
});

test("ingress: a selected pod admits only its rules' peers and ports; a pod no policy selects admits all", () => {
    assert.ok(allowed(policies, ns, e(bridge), e(pg), 5432));
    assert.ok(!allowed(policies, ns, e(bridge), e(pg), 5433), "another port");
    assert.ok(!allowed(policies, ns, e(dns), e(pg), 5432), "another namespace");
    assert.ok(allowed(policies, ns, e(pg), e(bridge), 3100), "the bridge is selected by no policy here");
});

test("egress: both ends must allow; an ipBlock's except is refused; policyTypes Ingress with no rule isolates ingress", () => {
    assert.ok(allowed(policies, ns, e(booking), e(dns), 53));
    assert.ok(!allowed(policies, ns, e(booking), e(pg), 5432), "booking's egress has no rule for PostgreSQL");
    assert.ok(allowed(policies, ns, e(booking), { ip: "203.0.113.10" }, 443));
    assert.ok(!allowed(policies, ns, e(booking), { ip: "10.200.0.1" }, 443), "a private address is in the except list");
    assert.ok(!allowed(policies, ns, e(bridge), e(booking), 8080), "booking's ingress is isolated with no rule");
});

test("declared flows: one source and one destination per peer and port; peers without pods are named, not tried", () => {
    const declared = [{ policy: "booking", namespace: "booking", podSelector: { "app.kubernetes.io/name": "booking" }, ingress: [{ description: "ingress-nginx", peers: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }], ports: [{ port: 8080, protocol: "TCP" }] }], egress: [{ description: "cluster DNS", peers: [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "kube-system" } }, podSelector: { matchLabels: { "k8s-app": "kube-dns" } } }], ports: [{ port: 53, protocol: "UDP" }, { port: 53, protocol: "TCP" }] }, { description: "the internet", peers: [{ ipBlock: { cidr: "0.0.0.0/0" } }], ports: [{ port: 443, protocol: "TCP" }] }] }];
    const { flows, unmatched } = declaredFlows(declared, [pg, bridge, booking, dns], ns, "203.0.113.10");
    assert.deepEqual(flows.map((f) => `${f.from.pod?.name}>${f.to.pod?.name ?? f.to.ip}:${f.port}`), ["booking>coredns:53", "booking>203.0.113.10:443"]);
    assert.equal(unmatched.length, 1);
    assert.match(unmatched[0], /ingress "ingress-nginx" port 8080: no running pod matches the peer/);
});

test("the refused sample holds only flows the policies do not allow", () => {
    const sample = undeclaredSample([pg, bridge, booking, dns], policies, ns);
    assert.ok(sample.length > 0);
    for (const f of sample) assert.ok(!allowed(policies, ns, f.from, f.to, f.port), `${f.from.pod?.name} -> ${f.to.pod?.name}:${f.port} is allowed`);
    assert.ok(!sample.some((f) => f.from.pod === bridge && f.to.pod === pg), "the bridge's namespace may reach PostgreSQL");
    assert.ok(sample.some((f) => f.from.pod === booking && f.to.pod === pg));
});
