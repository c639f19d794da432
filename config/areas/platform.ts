import { bool, chartVersion, cpu, email, int, intList, list, memory, oneOf, optional, port, str, storage, url } from "../schema";

const NAMESPACE = { pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, expected: "a namespace name (a DNS label)" };
const CHART_NAME = { pattern: /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/, expected: "a chart name such as \"ingress-nginx\"" };

/** A chart pinned by repository, name and exact version. */
function pin(what: string, repo: string, chart: string, version: string) {
    return {
        repo: url(`the chart repository of ${what}`, repo),
        chart: str(`the chart of ${what}`, chart, CHART_NAME),
        version: chartVersion(`the pinned chart version of ${what}`, version),
    };
}

/** One cluster add-on installed from a pinned chart into its own namespace. */
function addon(what: string, namespace: string, repo: string, chart: string, version: string) {
    return { namespace: str(`the namespace of ${what}`, namespace, NAMESPACE), ...pin(what, repo, chart, version) };
}

/**
 * Guardrails of every namespace of the environment (sections 2.1, 2.5): LimitRange defaults for
 * containers that set no resources, a ResourceQuota, default-deny NetworkPolicies and DNS.
 * The quota keys are per stack (dev is one small node, prod the specification's sizes);
 * platformQuotaOverrides raises single namespaces above the default.
 */
export const guardrails = {
    limitRange: {
        defaultCpu: cpu("LimitRange default cpu limit of a container that sets none", "500m"),
        defaultMemory: memory("LimitRange default memory limit of a container that sets none", "512Mi"),
        defaultRequestCpu: cpu("LimitRange default cpu request of a container that sets none", "100m"),
        defaultRequestMemory: memory("LimitRange default memory request of a container that sets none", "128Mi"),
    },
    quota: {
        requestsCpu: cpu("ResourceQuota requests.cpu of every namespace", "4"),
        requestsMemory: memory("ResourceQuota requests.memory of every namespace", "8Gi"),
        limitsCpu: cpu("ResourceQuota limits.cpu of every namespace", "8"),
        limitsMemory: memory("ResourceQuota limits.memory of every namespace", "16Gi"),
        requestsStorage: storage("ResourceQuota requests.storage (sum of PVC sizes) of every namespace", "100Gi"),
        persistentVolumeClaims: int("ResourceQuota persistentvolumeclaims of every namespace", 20, { min: 0, max: 1000 }),
        pods: int("ResourceQuota pods of every namespace", 50, { min: 1, max: 10000 }),
    },
    quotaOverrides: list(
        'per-namespace quota values above the default, each "<namespace>:<resource>=<quantity>" such as "search:limits.memory=24Gi" (resources: requests.cpu, requests.memory, limits.cpu, limits.memory, requests.storage, persistentvolumeclaims, pods)',
        [],
    ),
    apiServerCidr: str("addresses of the API server endpoints (egress of add-ons that call the API, ingress of admission webhooks)", "0.0.0.0/0", { pattern: /^\d{1,3}(\.\d{1,3}){3}\/\d{1,2}$/, expected: 'an IPv4 CIDR such as "10.0.0.10/32"' }),
    apiServerPorts: intList("API server ports (section 4.7: 6443; 443 is the in-cluster service port)", [443, 6443], port("a TCP port")),
};

/** TLS (section 2.11): the self-signed CA and the ACME issuer of cert-manager. */
export const issuers = {
    caCommonName: str("common name of the self-signed CA certificate", "ops-environment CA"),
    caOrganization: str("organization of the self-signed CA certificate", "ops-environment"),
    caValidityHours: int("validity of the self-signed CA certificate in hours", 87600, { min: 720, max: 175200, unit: "hours" }),
    caEarlyRenewalHours: int("hours before expiry when Pulumi replaces the CA certificate", 720, { min: 1, max: 8760, unit: "hours" }),
    caSecretName: str("the Secret (type kubernetes.io/tls, in the cert-manager namespace) holding the CA key pair", "self-signed-ca", NAMESPACE),
    acmeEmail: email("the ACME account e-mail of lets-encrypt", "ops@example.com"),
    acmeServer: url("the ACME directory: staging in dev, production in prod", "https://acme-staging-v02.api.letsencrypt.org/directory", ["https"]),
    acmeAccountKeySecretName: str("the Secret cert-manager creates for the ACME account key", "lets-encrypt-account-key", NAMESPACE),
};

/** Cluster add-ons (sections 2.1, 2.11, 4.7, 8.2): pinned charts, installed by Pulumi. */
export const addons = {
    installTimeoutSeconds: int("seconds helm waits for one add-on release (hooks included) to be ready before the install fails", 600, { min: 60, max: 3600, unit: "seconds" }),
    ingressNginx: {
        // Its namespace is ingressControllerNamespace.
        ...pin("the ingress controller", "https://kubernetes.github.io/ingress-nginx", "ingress-nginx", "4.11.3"),
        serviceType: oneOf("the ingress controller's Service type", ["LoadBalancer", "NodePort"] as const, "LoadBalancer"),
        replicas: int("ingress controller replicas", 2, { min: 1, max: 20 }),
        requests: { cpu: cpu("ingress controller cpu request", "100m"), memory: memory("ingress controller memory request", "128Mi") },
        limits: { cpu: cpu("ingress controller cpu limit", "1"), memory: memory("ingress controller memory limit", "512Mi") },
    },
    certManager: addon("cert-manager", "cert-manager", "https://charts.jetstack.io", "cert-manager", "v1.16.2"),
    reloader: addon("the reloader", "reloader", "https://stakater.github.io/stakater-charts", "reloader", "1.2.0"),
    metricsServer: {
        ...addon("the metrics server", "metrics", "https://kubernetes-sigs.github.io/metrics-server/", "metrics-server", "3.12.2"),
        kubeletInsecureTls: bool("metrics-server --kubelet-insecure-tls (only for clusters whose kubelet serving certificates are self-signed)", false),
    },
    vpa: addon("the vertical pod autoscaler", "vpa", "https://charts.fairwinds.com/stable", "vpa", "4.7.1"),
    argoCd: addon("Argo CD, the GitOps controller", "argocd", "https://argoproj.github.io/argo-helm", "argo-cd", "7.7.11"),
    monitoring: {
        ...addon("the monitoring stack (Prometheus operator, Prometheus, Alertmanager, node exporter)", "monitoring", "https://prometheus-community.github.io/helm-charts", "kube-prometheus-stack", "66.3.1"),
        retention: str("Prometheus retention", "15d", { pattern: /^\d+[smhdwy]$/, expected: 'a duration such as "15d"' }),
        storageSize: storage("Prometheus volume size", "20Gi"),
        etcdMetricsPort: int("the port of the key store's metrics endpoint on the control-plane nodes", 2381, { min: 1, max: 65535 }),
        requests: { cpu: cpu("Prometheus cpu request", "250m"), memory: memory("Prometheus memory request", "1Gi") },
        limits: { cpu: cpu("Prometheus cpu limit", "1"), memory: memory("Prometheus memory limit", "2Gi") },
    },
};

/**
 * Vertical autoscalers (section 2.1): each target is "<Kind>/<namespace>/<name>" of a workload
 * without a horizontal autoscaler (config/rules.ts refuses the others).
 */
export const verticalAutoscaling = {
    targets: list('workloads given a VerticalPodAutoscaler (updateMode Auto), each "<Deployment|StatefulSet>/<namespace>/<name>"', [], str("a workload reference", undefined, {
        pattern: /^(Deployment|StatefulSet)\/[a-z0-9]([-a-z0-9]*[a-z0-9])?\/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$/,
        expected: '"<Deployment|StatefulSet>/<namespace>/<name>", e.g. "Deployment/agent/agent-server-4000"',
    })),
    updateMode: oneOf("updatePolicy.updateMode of every VerticalPodAutoscaler", ["Auto"] as const, "Auto"),
    maxCpu: optional(cpu("maxAllowed cpu of every VerticalPodAutoscaler (unbounded when unset)")),
    maxMemory: optional(memory("maxAllowed memory of every VerticalPodAutoscaler (unbounded when unset)")),
};
