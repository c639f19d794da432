/**
 * The values of the add-on charts, as pure functions of the configuration. None carries a secret:
 * Argo CD generates its initial admin password on the cluster, the repository key is a Secret of
 * its own (components/platform/gitops.ts), Grafana of the monitoring chart is off.
 */
import type { StackConfig } from "../../config";
import { imageParts } from "./imageParts";

type Sizes = { containerRequests: { cpu: string; memory: string }; containerLimits: { cpu: string; memory: string } };
/** The requests and limits every sized container of an add-on gets (config: addons<Addon>Container*). */
const sized = (a: Sizes) => ({ requests: { ...a.containerRequests }, limits: { ...a.containerLimits } });
/** "registry/repository" and "tag[@sha256:…]" for the charts whose template prints "<repository>:<tag>". */
const repoTag = (ref: string) => {
    const i = imageParts(ref);
    return { repository: `${i.registry}/${i.repository}`, tag: i.tagWithDigest };
};
/** registry, repository, tag and the digest's hex, for templates that print "…:<tag>@sha256:<sha>". */
const withSha = (ref: string) => {
    const i = imageParts(ref);
    return { registry: i.registry, repository: i.repository, tag: i.tag, sha: i.sha };
};
/** The environment's labels (part-of-managed-by) for charts that label every object with commonLabels and set no part-of of their own. */
const partOf = (cfg: StackConfig) => ({ "app.kubernetes.io/part-of": cfg.environment.partOf });
const guaranteed = (cpu: string, memory: string) => ({ requests: { cpu, memory }, limits: { cpu, memory } });
/** A container that drops every capability, cannot escalate, and has a read-only root filesystem. */
const RESTRICTED = { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true };

/** The add-ons: the keys of config.addons that pin a chart (ingressNginx, certManager, ... monitoring). */
export type AddonKey = { [K in keyof StackConfig["addons"]]: StackConfig["addons"][K] extends { chart: string } ? K : never }[keyof StackConfig["addons"]];

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
            service: { type: a.serviceType, nodePorts: { http: a.httpNodePort, https: a.httpsNodePort } },
            resources: { requests: { ...a.requests }, limits: { ...a.limits } },
            metrics: { enabled: true },
            image: ingressImage(a.controllerImage),
            admissionWebhooks: {
                patch: { image: ingressImage(a.certgenImage) },
                createSecretJob: { resources: sized(a) },
                patchWebhookJob: { resources: sized(a) },
            },
        },
    };
}

/** ingress-nginx's image map: registry, image, tag, digest ("" = the tag alone). */
function ingressImage(ref: string) {
    const i = imageParts(ref);
    return { registry: i.registry, image: i.repository, tag: i.tag, digest: i.sha ? `sha256:${i.sha}` : "" };
}

export function certManagerValues(cfg: StackConfig) {
    const a = cfg.addons.certManager;
    // The chart's image helper prints "<repository>:<tag>" (no digest value set: it would replace the tag).
    const img = (ref: string) => repoTag(ref);
    return {
        // CRDs with the chart, kept on uninstall so certificates survive a reinstall.
        crds: { enabled: true, keep: true },
        global: { commonLabels: partOf(cfg) },
        image: img(a.controllerImage),
        resources: sized(a),
        webhook: { image: img(a.webhookImage), resources: sized(a) },
        cainjector: { image: img(a.cainjectorImage), resources: sized(a) },
        startupapicheck: { image: img(a.startupapicheckImage), resources: sized(a) },
        acmesolver: { image: img(a.acmesolverImage) },
    };
}

/** The reloader watches the annotation domain the workloads use (environmentReloaderDomain). */
export function reloaderValues(cfg: StackConfig) {
    const d = cfg.environment.reloaderDomain;
    const a = cfg.addons.reloader;
    const { repository, tag } = repoTag(a.image);
    return {
        reloader: {
            watchGlobally: true,
            custom_annotations: { configmap: `configmap.${d}/reload`, secret: `secret.${d}/reload` },
            // The chart's own switch: readOnlyRootFilesystem on the container (reloader writes nothing).
            readOnlyRootFileSystem: true,
            deployment: {
                image: { name: repository, tag },
                resources: sized(a),
                containerSecurityContext: RESTRICTED,
                // Pod labels (pod-app-labels); the chart's selector is app and release only.
                labels: { "app.kubernetes.io/name": "reloader", "app.kubernetes.io/instance": "reloader", "app.kubernetes.io/component": "controller" },
            },
        },
    };
}

export function metricsServerValues(cfg: StackConfig) {
    const a = cfg.addons.metricsServer;
    return {
        image: repoTag(a.image),
        resources: sized(a),
        commonLabels: partOf(cfg),
        podLabels: { "app.kubernetes.io/component": "metrics-server" },
        args: a.kubeletInsecureTls ? ["--kubelet-insecure-tls"] : [],
    };
}

/** vpa 4.7.1's default admissionController.certGen.podSecurityContext (values.yaml). */
const CERTGEN_POD_SECURITY = { runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } };

export function vpaValues(cfg: StackConfig) {
    const a = cfg.addons.vpa;
    const part = (ref: string) => ({ enabled: true, image: repoTag(ref), resources: sized(a) });
    return {
        recommender: part(a.recommenderImage),
        updater: part(a.updaterImage),
        admissionController: {
            ...part(a.admissionControllerImage),
            // The certgen hook Jobs' securityContexts as chart 4.7.1's defaults, set explicitly: the
            // previous minor (4.6.0, the e2e's upgrade path) reads the same keys with empty defaults,
            // and its hook pods were refused by the stack's admission policies (test/addonPreviousAdmission.test.ts).
            certGen: { image: repoTag(a.certgenImage), resources: sized(a), securityContext: RESTRICTED, podSecurityContext: CERTGEN_POD_SECURITY },
        },
    };
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
                image: withSha(m.prometheusImage),
                // The operator's pods carry name and instance; component completes pod-app-labels.
                podMetadata: { labels: { "app.kubernetes.io/component": "prometheus" } },
            },
        },
        alertmanager: {
            alertmanagerSpec: {
                // The digest in the tag, not in `sha`: the chart prints `sha: <value>` unquoted into the
                // Alertmanager object, where an all-digit digest (the offline placeholder) is an integer the CRD
                // refuses; `version` (the template's default is the tag) stays the plain tag.
                image: (({ sha, tag, ...rest }) => ({ ...rest, tag: sha ? `${tag}@sha256:${sha}` : tag }))(withSha(m.alertmanagerImage)),
                version: imageParts(m.alertmanagerImage).tag,
                podMetadata: { labels: { "app.kubernetes.io/component": "alertmanager" } },
                // A StatefulSet: Guaranteed QoS (stateful-guaranteed-qos in prod).
                resources: guaranteed(m.alertmanagerCpu, m.alertmanagerMemory),
            },
        },
        prometheusOperator: {
            image: withSha(m.operatorImage),
            resources: sized(m),
            // The reloader sidecar and init container of the Prometheus and Alertmanager StatefulSets:
            // probes on (--enable-config-reloader-probes), requests equal to limits (Guaranteed QoS).
            prometheusConfigReloader: { image: withSha(m.configReloaderImage), enableProbe: true, resources: guaranteed(m.configReloaderCpu, m.configReloaderMemory) },
            admissionWebhooks: { patch: { image: withSha(m.certgenImage), resources: sized(m) } },
        },
        // kube-state-metrics 5.27.0 prints "…:<tag>@<sha>": its sha carries the "sha256:" prefix.
        "kube-state-metrics": { image: (({ sha, ...rest }) => ({ ...rest, sha: sha ? `sha256:${sha}` : "" }))(withSha(m.kubeStateMetricsImage)), resources: sized(m) },
        "prometheus-node-exporter": {
            image: (({ sha, ...rest }) => ({ ...rest, digest: sha ? `sha256:${sha}` : "" }))(withSha(m.nodeExporterImage)),
            resources: sized(m),
            containerSecurityContext: RESTRICTED,
            // The subchart's pod securityContext with the runtime's default seccomp profile added.
            securityContext: { fsGroup: 65534, runAsGroup: 65534, runAsNonRoot: true, runAsUser: 65534, seccompProfile: { type: "RuntimeDefault" } },
        },
    };
}

/** Argo CD (sections 2.7, 5.8, 8.2): the read-only API account, its role, known hosts, the node port. */
export function argoCdValues(cfg: StackConfig) {
    const g = cfg.gitops;
    const a = cfg.addons.argoCd;
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
        server: { service: { type: "NodePort", nodePortHttps: g.serverNodePort, nodePortHttp: g.serverHttpNodePort }, resources: sized(a) },
        global: { image: repoTag(a.image) },
        // No single sign-on is configured: the Dex server would run for nothing.
        dex: { enabled: false },
        redis: { image: repoTag(a.redisImage), resources: sized(a), readinessProbe: { enabled: true }, livenessProbe: { enabled: true } },
        redisSecretInit: { resources: sized(a) },
        // The repo server's copyutil init container takes repoServer.resources too.
        repoServer: { resources: sized(a) },
        applicationSet: { resources: sized(a), readinessProbe: { enabled: true }, livenessProbe: { enabled: true } },
        notifications: { resources: sized(a), readinessProbe: { enabled: true }, livenessProbe: { enabled: true } },
        controller: { resources: { requests: { cpu: a.controllerCpu, memory: a.controllerMemory }, limits: { cpu: a.controllerCpu, memory: a.controllerMemory } } },
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
