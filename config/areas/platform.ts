import { bool, chartVersion, cpu, email, image, int, intList, list, memory, nodePort, oneOf, optional, port, str, storage, url, namespaceName, ipv4Cidr } from "../schema";

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
    return { namespace: namespaceName(`the namespace of ${what}`, namespace), ...pin(what, repo, chart, version) };
}

/**
 * The requests and limits of every container of an add-on's chart that this program sizes (the
 * container limits and requests constraints judge each one; the charts set none by default).
 */
function containers(what: string, requestCpu: string, requestMemory: string, limitCpu: string, limitMemory: string) {
    return {
        containerRequests: { cpu: cpu(`cpu request of each container of ${what}`, requestCpu), memory: memory(`memory request of each container of ${what}`, requestMemory) },
        containerLimits: { cpu: cpu(`cpu limit of each container of ${what}`, limitCpu), memory: memory(`memory limit of each container of ${what}`, limitMemory) },
    };
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
    /**
     * What a container writes to the node's disk besides its emptyDir volumes: its log files (the
     * kubelet rotates each at nodeAgentContainerLogMaxSize and keeps nodeAgentContainerLogMaxFiles)
     * and the little a read-only root file system still takes. Every container's
     * ephemeral-storage request and limit is this plus the size limits of the emptyDir volumes it
     * mounts (components/lib/pod.ts).
     */
    containerLogStorage: storage("ephemeral storage of each container for its logs, on top of the size limits of the emptyDir volumes it mounts (at least what the node agent keeps: nodeAgentContainerLogMaxFiles files of nodeAgentContainerLogMaxSize)", "64Mi"),
    apiTokenExpiration: int("expirationSeconds of the projected service-account token of a pod that calls the Kubernetes API (the kubelet renews it at 80%; 3607 is what the API server's own automount injects)", 3607, { min: 600, max: 86400, unit: "seconds" }),
    apiServerCidr: ipv4Cidr("addresses of the API server endpoints (egress of add-ons that call the API, ingress of admission webhooks)", "0.0.0.0/0"),
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
        // Set explicitly (node-port-allowlist: an unset node port is a random one); a LoadBalancer forwards to them.
        httpNodePort: nodePort("the node port of the ingress controller's HTTP Service port", 30880),
        httpsNodePort: nodePort("the node port of the ingress controller's HTTPS Service port", 30843),
        replicas: int("ingress controller replicas", 2, { min: 1, max: 20 }),
        requests: { cpu: cpu("ingress controller cpu request", "100m"), memory: memory("ingress controller memory request", "128Mi") },
        limits: { cpu: cpu("ingress controller cpu limit", "1"), memory: memory("ingress controller memory limit", "512Mi") },
        controllerImage: image("the ingress controller image (chart 4.11.3's controller.image; its digest is the one the chart publishes)", "registry.k8s.io/ingress-nginx/controller:v1.11.3"),
        certgenImage: image("the image of the controller's admission certificate hook Jobs (chart 4.11.3's controller.admissionWebhooks.patch.image)", "registry.k8s.io/ingress-nginx/kube-webhook-certgen:v1.4.4"),
        ...containers("the ingress controller's certificate hook Jobs", "10m", "32Mi", "100m", "64Mi"),
    },
    certManager: {
        ...addon("cert-manager", "cert-manager", "https://charts.jetstack.io", "cert-manager", "v1.16.2"),
        controllerImage: image("the cert-manager controller image (the chart's image; appVersion v1.16.2)", "quay.io/jetstack/cert-manager-controller:v1.16.2"),
        webhookImage: image("the cert-manager webhook image (the chart's webhook.image)", "quay.io/jetstack/cert-manager-webhook:v1.16.2"),
        cainjectorImage: image("the cert-manager CA injector image (the chart's cainjector.image)", "quay.io/jetstack/cert-manager-cainjector:v1.16.2"),
        acmesolverImage: image("the image of the ACME http01 solver pods cert-manager creates in the Ingresses' namespaces (the chart's acmesolver.image, passed as --acme-http01-solver-image)", "quay.io/jetstack/cert-manager-acmesolver:v1.16.2"),
        startupapicheckImage: image("the image of cert-manager's post-install API check Job (the chart's startupapicheck.image)", "quay.io/jetstack/cert-manager-startupapicheck:v1.16.2"),
        ...containers("cert-manager", "10m", "64Mi", "500m", "256Mi"),
    },
    reloader: {
        ...addon("the reloader", "reloader", "https://stakater.github.io/stakater-charts", "reloader", "1.2.0"),
        image: image("the reloader image (the chart's reloader.deployment.image; appVersion v1.2.0)", "ghcr.io/stakater/reloader:v1.2.0"),
        ...containers("the reloader", "10m", "64Mi", "200m", "256Mi"),
    },
    metricsServer: {
        ...addon("the metrics server", "metrics", "https://kubernetes-sigs.github.io/metrics-server/", "metrics-server", "3.12.2"),
        image: image("the metrics server image (the chart's image; appVersion 0.7.2)", "registry.k8s.io/metrics-server/metrics-server:v0.7.2"),
        ...containers("the metrics server", "100m", "200Mi", "500m", "400Mi"),
        kubeletInsecureTls: bool("metrics-server --kubelet-insecure-tls (only for clusters whose kubelet serving certificates are self-signed)", false),
    },
    vpa: {
        ...addon("the vertical pod autoscaler", "vpa", "https://charts.fairwinds.com/stable", "vpa", "4.7.1"),
        recommenderImage: image("the VPA recommender image (chart 4.7.1's appVersion 1.0.0)", "registry.k8s.io/autoscaling/vpa-recommender:1.0.0"),
        updaterImage: image("the VPA updater image", "registry.k8s.io/autoscaling/vpa-updater:1.0.0"),
        admissionControllerImage: image("the VPA admission controller image", "registry.k8s.io/autoscaling/vpa-admission-controller:1.0.0"),
        certgenImage: image("the image of the VPA admission controller's certificate hook Jobs (the chart's admissionController.certGen.image)", "registry.k8s.io/ingress-nginx/kube-webhook-certgen:v20230312-helm-chart-4.5.2-28-g66a760794"),
        ...containers("the vertical pod autoscaler", "50m", "128Mi", "500m", "512Mi"),
    },
    argoCd: {
        ...addon("Argo CD, the GitOps controller", "argocd", "https://argoproj.github.io/argo-helm", "argo-cd", "7.7.11"),
        image: image("the Argo CD image of every Argo CD component (chart 7.7.11's global.image; appVersion v2.13.2)", "quay.io/argoproj/argocd:v2.13.2"),
        redisImage: image("Argo CD's redis image (the chart's redis.image)", "public.ecr.aws/docker/library/redis:7.4.1-alpine"),
        ...containers("Argo CD (except the application controller)", "50m", "128Mi", "500m", "512Mi"),
        // The application controller is a StatefulSet: Guaranteed QoS in prod (stateful-guaranteed-qos).
        controllerCpu: cpu("cpu request and limit of the Argo CD application controller", "500m"),
        controllerMemory: memory("memory request and limit of the Argo CD application controller", "1Gi"),
    },
    monitoring: {
        ...addon("the monitoring stack (Prometheus operator, Prometheus, Alertmanager, node exporter)", "monitoring", "https://prometheus-community.github.io/helm-charts", "kube-prometheus-stack", "66.3.1"),
        retention: str("Prometheus retention", "15d", { pattern: /^\d+[smhdwy]$/, expected: 'a duration such as "15d"' }),
        storageSize: storage("Prometheus volume size", "20Gi"),
        operatorImage: image("the Prometheus operator image (chart 66.3.1's prometheusOperator.image)", "quay.io/prometheus-operator/prometheus-operator:v0.78.2"),
        configReloaderImage: image("the config reloader the operator adds to Prometheus and Alertmanager (prometheusOperator.prometheusConfigReloader.image)", "quay.io/prometheus-operator/prometheus-config-reloader:v0.78.2"),
        prometheusImage: image("the Prometheus image (prometheus.prometheusSpec.image)", "quay.io/prometheus/prometheus:v2.55.1"),
        alertmanagerImage: image("the Alertmanager image (alertmanager.alertmanagerSpec.image)", "quay.io/prometheus/alertmanager:v0.27.0"),
        kubeStateMetricsImage: image("the kube-state-metrics image (subchart kube-state-metrics 5.27.0's image)", "registry.k8s.io/kube-state-metrics/kube-state-metrics:v2.14.0"),
        nodeExporterImage: image("the node exporter image (subchart prometheus-node-exporter 4.42.0's image)", "quay.io/prometheus/node-exporter:v1.8.2"),
        certgenImage: image("the image of the operator's admission certificate hook Jobs (prometheusOperator.admissionWebhooks.patch.image)", "registry.k8s.io/ingress-nginx/kube-webhook-certgen:v20221220-controller-v1.5.1-58-g787ea74b6"),
        ...containers("the monitoring stack (operator, kube-state-metrics, node exporter, hook Jobs)", "50m", "64Mi", "500m", "512Mi"),
        // StatefulSets made by the operator: requests equal to limits (Guaranteed QoS).
        alertmanagerCpu: cpu("cpu request and limit of Alertmanager", "100m"),
        alertmanagerMemory: memory("memory request and limit of Alertmanager", "128Mi"),
        configReloaderCpu: cpu("cpu request and limit of the config reloader in the Prometheus and Alertmanager pods", "50m"),
        configReloaderMemory: memory("memory request and limit of the config reloader in the Prometheus and Alertmanager pods", "64Mi"),
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
