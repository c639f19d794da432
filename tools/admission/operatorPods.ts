/**
 * The StatefulSets the Prometheus operator (v0.78.2, kube-prometheus-stack 66.3.1) makes from the
 * rendered Prometheus and Alertmanager resources: helm never renders them, the API server judges
 * them all the same. A model of what the admission rules look at, read in the operator's source at
 * v0.78.2 (Go module github.com/prometheus-operator/prometheus-operator):
 * - pod labels: the resource's podMetadata.labels, app.kubernetes.io/version, and the selector labels
 *   (pkg/prometheus/server/operator.go and pkg/alertmanager/operator.go makeSelectorLabels);
 * - the main container: image, resources from the resource, liveness and readiness probes, and
 *   securityContext readOnlyRootFilesystem, allowPrivilegeEscalation false, drop ALL
 *   (pkg/prometheus/server/statefulset.go, pkg/alertmanager/statefulset.go);
 * - config-reloader and init-config-reloader: the operator's --prometheus-config-reloader image and
 *   --config-reloader-{cpu,memory}-{request,limit} (0 = unset), the same securityContext, probes only on
 *   the sidecar and only with --enable-config-reloader-probes (pkg/operator/config_reloader.go);
 * - the pod securityContext is the resource's; volumes are secrets, configMaps, emptyDirs, projected
 *   and the volume claim template (persistentVolumeClaim).
 * Ports, arguments, mounts and environment are left out: no rule of the catalogue reads them.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";

type Any = Record<string, any>;

function operatorArgs(objects: readonly K8sObject[]): Map<string, string> {
    const op = objects.find((o) => o.kind === "Deployment" && ((o as Any).spec?.template?.spec?.containers ?? []).some((c: Any) => (c.args ?? []).some((a: string) => a.startsWith("--prometheus-config-reloader="))));
    if (!op) throw new Error("no Prometheus operator Deployment with --prometheus-config-reloader among the rendered objects");
    const args: string[] = (op as Any).spec.template.spec.containers.flatMap((c: Any) => c.args ?? []);
    return new Map(args.filter((a) => a.startsWith("--")).map((a) => [a.slice(2, a.includes("=") ? a.indexOf("=") : undefined), a.includes("=") ? a.slice(a.indexOf("=") + 1) : "true"]));
}

const RESTRICTED = { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ["ALL"] } };

/** The StatefulSet of each Prometheus and Alertmanager resource among the rendered objects. */
export function operatorStatefulSets(objects: readonly K8sObject[]): K8sObject[] {
    const crs = objects.filter((o) => o.apiVersion === "monitoring.coreos.com/v1" && (o.kind === "Prometheus" || o.kind === "Alertmanager"));
    if (crs.length === 0) return [];
    const args = operatorArgs(objects);
    const quantity = (k: string) => (args.get(k) && args.get(k) !== "0" ? args.get(k) : undefined);
    const reloaderResources = {
        requests: Object.fromEntries([["cpu", quantity("config-reloader-cpu-request")], ["memory", quantity("config-reloader-memory-request")]].filter(([, v]) => v)),
        limits: Object.fromEntries([["cpu", quantity("config-reloader-cpu-limit")], ["memory", quantity("config-reloader-memory-limit")]].filter(([, v]) => v)),
    };
    const reloader = (name: string, probes: boolean): Any => ({
        name,
        image: args.get("prometheus-config-reloader"),
        resources: reloaderResources,
        securityContext: RESTRICTED,
        ...(probes && args.get("enable-config-reloader-probes") === "true" ? { livenessProbe: { httpGet: { path: "/healthz", port: 8080 } }, readinessProbe: { httpGet: { path: "/healthz", port: 8080 } } } : {}),
    });
    return crs.map((cr: Any) => {
        const kind = cr.kind === "Prometheus" ? "prometheus" : "alertmanager";
        const name = cr.metadata.name;
        const selector: Record<string, string> = kind === "prometheus"
            ? { "app.kubernetes.io/managed-by": "prometheus-operator", "app.kubernetes.io/name": "prometheus", "app.kubernetes.io/instance": name, "operator.prometheus.io/name": name, prometheus: name, "operator.prometheus.io/shard": "0" }
            : { "app.kubernetes.io/name": "alertmanager", "app.kubernetes.io/managed-by": "prometheus-operator", "app.kubernetes.io/instance": name, alertmanager: name };
        const labels = { "app.kubernetes.io/version": String(cr.spec.version ?? ""), ...(cr.spec.podMetadata?.labels ?? {}), ...selector };
        const probe = { httpGet: { path: kind === "prometheus" ? "/-/ready" : "/-/healthy", port: "web" } };
        const claim = cr.spec.storage?.volumeClaimTemplate;
        return {
            apiVersion: "apps/v1",
            kind: "StatefulSet",
            metadata: { name: `${kind}-${name}`, namespace: cr.metadata.namespace, labels: { ...(cr.metadata.labels ?? {}) } },
            spec: {
                replicas: cr.spec.replicas ?? 1,
                serviceName: `${kind}-operated`,
                selector: { matchLabels: selector },
                template: {
                    metadata: { labels },
                    spec: {
                        automountServiceAccountToken: cr.spec.automountServiceAccountToken ?? true,
                        securityContext: cr.spec.securityContext,
                        containers: [
                            { name: kind, image: cr.spec.image, resources: cr.spec.resources ?? {}, livenessProbe: probe, readinessProbe: probe, securityContext: RESTRICTED },
                            reloader("config-reloader", true),
                        ],
                        initContainers: [reloader("init-config-reloader", false)],
                        volumes: [
                            { name: "config", secret: { secretName: `${kind}-${name}-generated` } },
                            { name: "tls-assets", projected: { sources: [] } },
                            { name: "config-out", emptyDir: {} },
                            ...(claim ? [{ name: `${kind}-${name}-db`, persistentVolumeClaim: { claimName: `${kind}-${name}-db` } }] : [{ name: `${kind}-${name}-db`, emptyDir: {} }]),
                        ],
                    },
                },
            },
        } as K8sObject;
    });
}
