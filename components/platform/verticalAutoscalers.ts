/**
 * Vertical autoscalers (section 2.1) for the workloads verticalAutoscalingTargets names: requests
 * and limits follow usage history (updateMode Auto). Never on a workload that has a horizontal
 * autoscaler: config/rules.ts refuses that, and this component checks again before creating any.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { horizontallyScaled, parseWorkloadRef, workloadKey } from "../../config/platformRules";
import { environmentLabels } from "../lib/labels";

export interface VerticalAutoscalersArgs {
    config: StackConfig;
    /** The vertical pod autoscaler's Chart (its CRD). */
    vpa: pulumi.Resource;
}

export class VerticalAutoscalers extends pulumi.ComponentResource {
    public readonly targets: string[];

    constructor(name: string, args: VerticalAutoscalersArgs, opts?: pulumi.ComponentResourceOptions) {
        const cfg = args.config;
        const v = cfg.verticalAutoscaling;
        const horizontal = new Set(horizontallyScaled(cfg).map(workloadKey));
        const clash = v.targets.filter((t) => horizontal.has(t));
        if (clash.length > 0)
            throw new Error(`verticalAutoscalingTargets: ${clash.join(", ")} also ${clash.length === 1 ? "has" : "have"} a horizontal autoscaler; expected only workloads without one`);
        super("ops:platform:VerticalAutoscalers", name, {}, opts);

        const maxAllowed = v.maxCpu || v.maxMemory ? { ...(v.maxCpu ? { cpu: v.maxCpu } : {}), ...(v.maxMemory ? { memory: v.maxMemory } : {}) } : undefined;
        for (const ref of v.targets) {
            const w = parseWorkloadRef(ref);
            new k8s.apiextensions.CustomResource(`${name}-${w.namespace}-${w.name}`, {
                apiVersion: "autoscaling.k8s.io/v1",
                kind: "VerticalPodAutoscaler",
                metadata: {
                    name: w.name,
                    namespace: w.namespace,
                    labels: environmentLabels(cfg),
                },
                spec: {
                    targetRef: { apiVersion: "apps/v1", kind: w.kind, name: w.name },
                    updatePolicy: { updateMode: v.updateMode },
                    ...(maxAllowed ? { resourcePolicy: { containerPolicies: [{ containerName: "*", maxAllowed }] } } : {}),
                },
            }, { parent: this, dependsOn: [args.vpa] });
        }
        this.targets = [...v.targets];
        this.registerOutputs({ targets: this.targets });
    }
}
