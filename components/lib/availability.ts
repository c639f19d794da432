import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";

export interface AutoscalerArgs {
    namespace: string;
    labels: Record<string, string>;
    target: { kind: "Deployment" | "StatefulSet"; name: string };
    minReplicas: number;
    maxReplicas: number;
    /** Target average cpu utilization, percent of the pods' requests (section 2.4 rule 5). */
    cpuUtilization: number;
    scaleDownWindow: number;
}

/** A horizontal autoscaler on cpu utilization, with a scale-down stabilization window. */
export function cpuAutoscaler(name: string, args: AutoscalerArgs, opts: pulumi.CustomResourceOptions) {
    return new k8s.autoscaling.v2.HorizontalPodAutoscaler(name, {
        metadata: { name, namespace: args.namespace, labels: args.labels },
        spec: {
            scaleTargetRef: { apiVersion: "apps/v1", kind: args.target.kind, name: args.target.name },
            minReplicas: args.minReplicas,
            maxReplicas: args.maxReplicas,
            metrics: [{ type: "Resource", resource: { name: "cpu", target: { type: "Utilization", averageUtilization: args.cpuUtilization } } }],
            behavior: {
                scaleDown: { stabilizationWindowSeconds: args.scaleDownWindow, selectPolicy: "Min", policies: [{ type: "Pods", value: 1, periodSeconds: 60 }] },
                scaleUp: { stabilizationWindowSeconds: 0, selectPolicy: "Max", policies: [{ type: "Percent", value: 100, periodSeconds: 15 }] },
            },
        },
    }, opts);
}

/** A PodDisruptionBudget keeping all but one replica up; none for single-replica workloads. */
export function disruptionBudget(
    name: string,
    args: { namespace: string; labels: Record<string, string>; selector: Record<string, string>; replicas: number },
    opts: pulumi.CustomResourceOptions,
): k8s.policy.v1.PodDisruptionBudget | undefined {
    if (args.replicas <= 1) return undefined;
    return new k8s.policy.v1.PodDisruptionBudget(name, {
        metadata: { name, namespace: args.namespace, labels: args.labels },
        spec: { maxUnavailable: 1, selector: { matchLabels: args.selector } },
    }, opts);
}
