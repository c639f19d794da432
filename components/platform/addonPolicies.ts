/**
 * What each add-on's pods may do inside its default-deny namespace (section 2.5). The ports are
 * the charts' own container ports; API server addresses and ports come from guardrails config.
 */
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { allowOnly, Flow, internet, namespace, Peer, PortSpec } from "../lib/network";
import type { AddonKey } from "./addonValues";
import { environmentLabels } from "../lib/labels";

/** Container ports of the charts (their defaults), named for what listens there. */
const CHART_PORTS = {
    ingressHttp: 80,
    ingressHttps: 443,
    ingressWebhook: 8443,
    ingressMetrics: 10254,
    certManagerWebhook: 10250,
    certManagerMetrics: 9402,
    acmeHttp: 80,
    acmeHttps: 443,
    reloaderMetrics: 9090,
    metricsServer: 10250,
    kubelet: 10250,
    vpaWebhook: 8000,
    argoServer: 8080,
    operatorWebhook: 10250,
    prometheus: 9090,
    nodeExporter: 9100,
    alertmanagerReceivers: 443,
} as const;

const ports = (...p: number[]): PortSpec[] => p.map((port) => ({ port }));
const ALL_PORTS: PortSpec[] = [];

const anyPodInCluster: Peer = { description: "any pod in any namespace", peers: [{ namespaceSelector: {} }] };

export function apiServer(cfg: StackConfig): Flow {
    return {
        peer: { description: "the API server", peers: [{ ipBlock: { cidr: cfg.guardrails.apiServerCidr } }] },
        ports: cfg.guardrails.apiServerPorts.map((port) => ({ port })),
    };
}

const webhookFrom = (cfg: StackConfig, port: number): Flow => ({ peer: apiServer(cfg).peer, ports: ports(port) });

/** The flows of each add-on's pods: who connects to them, whom they connect to (DNS is always allowed). */
export function addonFlows(cfg: StackConfig, ns: Record<AddonKey, string>, dashboardNamespace: string): Record<AddonKey, { ingress: Flow[]; egress: Flow[] }> {
    const monitoring = namespace(ns.monitoring);
    const api = apiServer(cfg);
    const own = (key: AddonKey): Flow => ({ peer: namespace(ns[key]), ports: ALL_PORTS });
    return {
        ingressNginx: {
            ingress: [
                { peer: internet(false), ports: ports(CHART_PORTS.ingressHttp, CHART_PORTS.ingressHttps) },
                webhookFrom(cfg, CHART_PORTS.ingressWebhook),
                { peer: monitoring, ports: ports(CHART_PORTS.ingressMetrics) },
            ],
            // The back ends live in every application namespace, each admitting only this namespace.
            egress: [api, { peer: anyPodInCluster, ports: ALL_PORTS }],
        },
        certManager: {
            ingress: [webhookFrom(cfg, CHART_PORTS.certManagerWebhook), { peer: monitoring, ports: ports(CHART_PORTS.certManagerMetrics) }],
            // ACME directory, and the http01 self-check through the public host names.
            egress: [api, { peer: internet(false), ports: ports(CHART_PORTS.acmeHttp, CHART_PORTS.acmeHttps) }],
        },
        reloader: {
            ingress: [{ peer: monitoring, ports: ports(CHART_PORTS.reloaderMetrics) }],
            egress: [api],
        },
        metricsServer: {
            ingress: [webhookFrom(cfg, CHART_PORTS.metricsServer)],
            egress: [api, { peer: internet(false), ports: ports(CHART_PORTS.kubelet) }],
        },
        vpa: {
            ingress: [webhookFrom(cfg, CHART_PORTS.vpaWebhook)],
            egress: [api],
        },
        argoCd: {
            // The GitOps server's node port reaches the server pods on their container port (section 8.2).
            ingress: [{ peer: internet(false), ports: ports(CHART_PORTS.argoServer) }, own("argoCd"), { peer: monitoring, ports: ALL_PORTS }],
            egress: [api, own("argoCd"), { peer: internet(), ports: cfg.gitops.gitPorts.map((port) => ({ port })) }],
        },
        monitoring: {
            ingress: [own("monitoring"), webhookFrom(cfg, CHART_PORTS.operatorWebhook), { peer: namespace(dashboardNamespace), ports: ports(CHART_PORTS.prometheus) }],
            egress: [
                api,
                own("monitoring"),
                { peer: anyPodInCluster, ports: ALL_PORTS },
                // Node-level targets: kubelets, node exporters, the key store's metrics endpoint.
                { peer: internet(false), ports: ports(CHART_PORTS.kubelet, CHART_PORTS.nodeExporter, cfg.addons.monitoring.etcdMetricsPort) },
                { peer: internet(), ports: ports(CHART_PORTS.alertmanagerReceivers) },
            ],
        },
    };
}

/** One NetworkPolicy per add-on namespace, over all of its pods. */
export function addonPolicies(cfg: StackConfig, ns: Record<AddonKey, string>, dashboardNamespace: string, opts: pulumi.CustomResourceOptions) {
    const labels = environmentLabels(cfg);
    return Object.entries(addonFlows(cfg, ns, dashboardNamespace)).map(([key, flows]) =>
        allowOnly(`${key.replace(/[A-Z]/g, (c) => "-" + c.toLowerCase())}-allow`, { namespace: ns[key as AddonKey], podSelector: {}, labels, ...flows }, opts),
    );
}
