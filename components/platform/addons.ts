/**
 * Cluster add-ons from pinned charts (sections 2.1, 2.7, 2.11, 6.4, 8.2): the ingress controller,
 * cert-manager with its CRDs, the reloader, the metrics server, the vertical pod autoscaler,
 * Argo CD and the monitoring stack.
 *
 * Each is one helm release (k8s.helm.v3.Release), not a helm v4 Chart: the v4 Chart never runs chart
 * hooks (pulumi/pulumi-kubernetes#3284; the maintainers point to Release for such charts), and these
 * charts make what their controllers need in hooks: ingress-nginx's admission certificate Secret and
 * webhook caBundle (pre-install/post-install Jobs; without them the fail-closed webhook rejects every
 * Ingress), Argo CD's redis password Secret (redisSecretInit, a pre-install Job), the
 * kube-prometheus-stack operator's admission certificate (admissionWebhooks.patch Jobs) and the VPA
 * admission controller's certificate (its certgen hook Job). Release installs with the helm library,
 * hooks included, and waits until the release's objects are ready (CRDs installed by the charts
 * themselves), so one `pulumi up` on an empty cluster brings everything and the CRD users
 * (ClusterIssuers, VerticalPodAutoscalers, the parent Application, PrometheusRules, Ingresses) that
 * depend on these Releases come after. A Release is one resource whose inputs are the pinned chart and
 * its values: a second `pulumi up` with the same inputs changes nothing (no upgrade, no hook run).
 * The offline render shows each Release with its values, not the chart's objects.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import {
    AddonKey, argoCdValues, certManagerValues, ingressNginxValues, metricsServerValues, MONITORING_RELEASE, monitoringValues, reloaderValues, vpaValues,
} from "./addonValues";
import { addonPolicies } from "./addonPolicies";

export interface AddonsArgs {
    config: StackConfig;
    /** The Namespace objects the charts install into. */
    namespace: (name: string) => pulumi.Resource;
}

export type { AddonKey };

export interface AddonSpec {
    namespace: string;
    release: string;
    values: Record<string, unknown>;
}

/** Each add-on's namespace, release name and values (the pinned chart is config.addons[key]). */
export function addonSpecs(cfg: StackConfig): Record<AddonKey, AddonSpec> {
    const a = cfg.addons;
    return {
        ingressNginx: { namespace: cfg.ingress.controllerNamespace, release: a.ingressNginx.chart, values: ingressNginxValues(cfg) },
        certManager: { namespace: a.certManager.namespace, release: a.certManager.chart, values: certManagerValues(cfg) },
        reloader: { namespace: a.reloader.namespace, release: a.reloader.chart, values: reloaderValues(cfg) },
        metricsServer: { namespace: a.metricsServer.namespace, release: a.metricsServer.chart, values: metricsServerValues(cfg) },
        vpa: { namespace: a.vpa.namespace, release: a.vpa.chart, values: vpaValues(cfg) },
        argoCd: { namespace: a.argoCd.namespace, release: a.argoCd.chart, values: argoCdValues(cfg) },
        monitoring: { namespace: a.monitoring.namespace, release: MONITORING_RELEASE, values: monitoringValues(cfg) },
    };
}

export class Addons extends pulumi.ComponentResource {
    public readonly charts: Record<AddonKey, k8s.helm.v3.Release>;
    /** The namespace of each add-on. */
    public readonly namespaces: Record<AddonKey, string>;

    constructor(name: string, args: AddonsArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:Addons", name, {}, opts);
        const cfg = args.config;
        const a = cfg.addons;
        const specs = addonSpecs(cfg);
        const charts = {} as Record<AddonKey, k8s.helm.v3.Release>;
        const namespaces = {} as Record<AddonKey, string>;
        for (const [key, spec] of Object.entries(specs) as [AddonKey, AddonSpec][]) {
            const pin = a[key];
            charts[key] = new k8s.helm.v3.Release(`${name}-${pin.chart}`, {
                // A fixed release name (no random suffix): the Services other parts name stay stable.
                name: spec.release,
                namespace: spec.namespace,
                createNamespace: false,
                chart: pin.chart,
                version: pin.version,
                repositoryOpts: { repo: pin.repo },
                values: spec.values,
                // Hooks and objects must be ready before dependents are created; Jobs (hooks) must succeed.
                waitForJobs: true,
                timeout: a.installTimeoutSeconds,
            }, { parent: this, dependsOn: [args.namespace(spec.namespace)] });
            namespaces[key] = spec.namespace;
        }
        addonPolicies(cfg, namespaces, cfg.gitops.dashboard.namespace, { parent: this, dependsOn: Object.values(namespaces).map(args.namespace) });
        this.charts = charts;
        this.namespaces = namespaces;
        this.registerOutputs({ namespaces });
    }
}
