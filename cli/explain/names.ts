/**
 * Stable DNS names (specification sections 2.2, 2.3): every Service as
 * <service>.<namespace>.svc.cluster.local, and every StatefulSet pod as
 * <statefulset>-<ordinal>.<service>.<namespace>.svc.cluster.local through its headless service.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { Workload } from "./workloads";

export const CLUSTER_DOMAIN = "cluster.local";

export interface ServiceName {
    service: string;
    dns: string;
    headless: boolean;
    type: string;
    ports: string[];
}

export interface PodName {
    statefulSet: string;
    ordinal: number;
    dns: string;
    /** Empty when the governing service is missing or not headless: the per-pod names do not resolve. */
    problem?: string;
}

export const serviceDns = (service: string, namespace: string) => `${service}.${namespace}.svc.${CLUSTER_DOMAIN}`;
export const statefulPodDns = (sts: string, ordinal: number, service: string, namespace: string) => `${sts}-${ordinal}.${service}.${namespace}.svc.${CLUSTER_DOMAIN}`;

export function names(objects: K8sObject[], workloads: Workload[]): { services: ServiceName[]; statefulPods: PodName[] } {
    const services = objects.filter((o) => o.kind === "Service").map((o) => {
        const ns = o.metadata?.namespace ?? "default";
        return {
            service: `${ns}/${o.metadata?.name}`,
            dns: serviceDns(o.metadata!.name!, ns),
            headless: o.spec?.clusterIP === "None",
            type: o.spec?.type ?? "ClusterIP",
            ports: (o.spec?.ports ?? []).map((p: any) => `${p.name ? p.name + " " : ""}${p.port}/${p.protocol ?? "TCP"}${p.nodePort ? ` (node port ${p.nodePort})` : ""}`),
        };
    }).sort((a, b) => (a.service < b.service ? -1 : 1));
    const statefulPods: PodName[] = [];
    for (const w of workloads.filter((x) => x.kind === "StatefulSet")) {
        const svcName = w.object.spec?.serviceName;
        const svc = services.find((s) => s.service === `${w.namespace}/${svcName}`);
        const problem = !svcName ? "no spec.serviceName" : !svc ? `service ${svcName} is not in the render` : !svc.headless ? `service ${svcName} is not headless (clusterIP None)` : undefined;
        for (let i = 0; i < w.replicas; i++) statefulPods.push({ statefulSet: w.id, ordinal: i, dns: statefulPodDns(w.name, i, svcName ?? "<none>", w.namespace), ...(problem ? { problem } : {}) });
    }
    return { services, statefulPods };
}
