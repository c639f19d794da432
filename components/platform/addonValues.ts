/**
 * The values of the add-on charts, as pure functions of the configuration. None carries a secret:
 * Argo CD generates its initial admin password on the cluster, the repository key is a Secret of
 * its own (components/platform/gitops.ts), Grafana of the monitoring chart is off.
 */
import type { StackConfig } from "../../config";

/** The release name and full name of the monitoring chart, so other parts can name its Services. */
export const MONITORING_RELEASE = "kube-prometheus-stack";
export const PROMETHEUS_PORT = 9090;
export const prometheusUrl = (cfg: StackConfig) => `http://${MONITORING_RELEASE}-prometheus.${cfg.addons.monitoring.namespace}.svc:${PROMETHEUS_PORT}`;

export function ingressNginxValues(cfg: StackConfig) {
    const i = cfg.ingress;
    const a = cfg.addons.ingressNginx;
    return {
        controller: {
            replicaCount: a.replicas,
            ingressClass: i.className,
            ingressClassResource: { name: i.className, enabled: true, default: true },
            // Section 8.2: the controller-wide defaults; each Ingress repeats its own proxy annotations.
            config: {
                "upstream-keepalive-connections": String(i.upstreamKeepaliveConnections),
                "upstream-keepalive-timeout": String(i.upstreamKeepaliveTimeout),
                "proxy-connect-timeout": String(i.proxyConnectTimeout),
                "proxy-send-timeout": String(i.proxySendTimeout),
                "proxy-read-timeout": String(i.proxyReadTimeout),
                "proxy-body-size": i.proxyBodySize,
            },
            allowSnippetAnnotations: false,
            service: { type: a.serviceType },
            resources: { requests: { ...a.requests }, limits: { ...a.limits } },
            metrics: { enabled: true },
        },
    };
}

export function certManagerValues(_cfg: StackConfig) {
    // CRDs with the chart, kept on uninstall so certificates survive a reinstall.
    return { crds: { enabled: true, keep: true } };
}

/** The reloader watches the annotation domain the workloads use (environmentReloaderDomain). */
export function reloaderValues(cfg: StackConfig) {
    const d = cfg.environment.reloaderDomain;
    return { reloader: { watchGlobally: true, custom_annotations: { configmap: `configmap.${d}/reload`, secret: `secret.${d}/reload` } } };
}

export function metricsServerValues(cfg: StackConfig) {
    return { args: cfg.addons.metricsServer.kubeletInsecureTls ? ["--kubelet-insecure-tls"] : [] };
}

export function vpaValues(_cfg: StackConfig) {
    return { recommender: { enabled: true }, updater: { enabled: true }, admissionController: { enabled: true } };
}

export function monitoringValues(cfg: StackConfig) {
    const m = cfg.addons.monitoring;
    return {
        fullnameOverride: MONITORING_RELEASE,
        // The dashboard is a child application with its own admin secret (section 8.3).
        grafana: { enabled: false },
        // KubeNodeNotReady and KubeletDown are this program's own rules (components/platform/monitoring.ts).
        defaultRules: { disabled: { KubeNodeNotReady: true, KubeletDown: true } },
        kubeEtcd: { service: { port: m.etcdMetricsPort, targetPort: m.etcdMetricsPort } },
        prometheus: {
            prometheusSpec: {
                ruleSelectorNilUsesHelmValues: false,
                serviceMonitorSelectorNilUsesHelmValues: false,
                podMonitorSelectorNilUsesHelmValues: false,
                retention: m.retention,
                resources: { requests: { ...m.requests }, limits: { ...m.limits } },
                storageSpec: { volumeClaimTemplate: { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: m.storageSize } } } } },
            },
        },
    };
}

/** Argo CD (sections 2.7, 5.8, 8.2): the read-only API account, its role, known hosts, the node port. */
export function argoCdValues(cfg: StackConfig) {
    const g = cfg.gitops;
    const role = `role:${g.readonlyRole}`;
    return {
        configs: {
            cm: {
                [`accounts.${g.readonlyAccount}`]: "apiKey",
                "users.anonymous.enabled": "false",
            },
            rbac: {
                "policy.default": "",
                "policy.csv": readonlyPolicy(role, g.readonlyAccount),
            },
            ssh: { extraHosts: g.knownHosts.join("\n") },
        },
        server: { service: { type: "NodePort", nodePortHttps: g.serverNodePort } },
    };
}

/** Get on applications, projects, repositories and clusters, nothing else (section 2.7). */
export function readonlyPolicy(role: string, account: string): string {
    return [
        `p, ${role}, applications, get, */*, allow`,
        `p, ${role}, projects, get, *, allow`,
        `p, ${role}, repositories, get, *, allow`,
        `p, ${role}, clusters, get, *, allow`,
        `g, ${account}, ${role}`,
    ].join("\n") + "\n";
}
