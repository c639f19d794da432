/**
 * Cluster add-ons from pinned charts (sections 2.1, 2.7, 2.11, 6.4, 8.2): the ingress controller,
 * cert-manager with its CRDs, the reloader, the metrics server, the vertical pod autoscaler,
 * Argo CD and the monitoring stack. Pulumi installs them itself (helm v4 Chart), so that one
 * `pulumi up` on an empty cluster brings the CRDs before the objects that need them: ClusterIssuers,
 * VerticalPodAutoscalers, the parent Application and PrometheusRules depend on these Charts.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import {
    argoCdValues, certManagerValues, ingressNginxValues, metricsServerValues, MONITORING_RELEASE, monitoringValues, reloaderValues, vpaValues,
} from "./addonValues";
import { addonPolicies } from "./addonPolicies";

export interface AddonsArgs {
    config: StackConfig;
    /** The Namespace objects the charts install into. */
    namespace: (name: string) => pulumi.Resource;
}

export type AddonKey = "ingressNginx" | "certManager" | "reloader" | "metricsServer" | "vpa" | "argoCd" | "monitoring";

interface AddonSpec {
    namespace: string;
    release: string;
    values: Record<string, unknown>;
}

export class Addons extends pulumi.ComponentResource {
    public readonly charts: Record<AddonKey, k8s.helm.v4.Chart>;
    /** The namespace of each add-on. */
    public readonly namespaces: Record<AddonKey, string>;

    constructor(name: string, args: AddonsArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:Addons", name, {}, opts);
        const cfg = args.config;
        const a = cfg.addons;
        const specs: Record<AddonKey, AddonSpec> = {
            ingressNginx: { namespace: cfg.ingress.controllerNamespace, release: a.ingressNginx.chart, values: ingressNginxValues(cfg) },
            certManager: { namespace: a.certManager.namespace, release: a.certManager.chart, values: certManagerValues(cfg) },
            reloader: { namespace: a.reloader.namespace, release: a.reloader.chart, values: reloaderValues(cfg) },
            metricsServer: { namespace: a.metricsServer.namespace, release: a.metricsServer.chart, values: metricsServerValues(cfg) },
            vpa: { namespace: a.vpa.namespace, release: a.vpa.chart, values: vpaValues(cfg) },
            argoCd: { namespace: a.argoCd.namespace, release: a.argoCd.chart, values: argoCdValues(cfg) },
            monitoring: { namespace: a.monitoring.namespace, release: MONITORING_RELEASE, values: monitoringValues(cfg) },
        };
        const charts = {} as Record<AddonKey, k8s.helm.v4.Chart>;
        const namespaces = {} as Record<AddonKey, string>;
        for (const [key, spec] of Object.entries(specs) as [AddonKey, AddonSpec][]) {
            const pin = a[key];
            charts[key] = new k8s.helm.v4.Chart(`${name}-${pin.chart}`, {
                name: spec.release,
                namespace: spec.namespace,
                chart: pin.chart,
                version: pin.version,
                repositoryOpts: { repo: pin.repo },
                values: spec.values,
            }, { parent: this, dependsOn: [args.namespace(spec.namespace)] });
            namespaces[key] = spec.namespace;
        }
        addonPolicies(cfg, namespaces, cfg.gitops.dashboard.namespace, { parent: this, dependsOn: Object.values(namespaces).map(args.namespace) });
        this.charts = charts;
        this.namespaces = namespaces;
        this.registerOutputs({ namespaces });
    }
}
