import type { Inventory, TemplateRule } from "../types";
import { regoFormat } from "./lib/pod";
import { parseApiVersion } from "../engine/gvk";

export interface ReplicaRange {
    min_replicas?: number;
    max_replicas?: number;
}

export interface Params {
    enforceScaleTargetRef?: boolean;
    minimumReplicaSpread?: number;
    ranges?: ReplicaRange[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sHorizontalPodAutoscaler",
    template: "horizontalpodautoscaler",
    category: "general",
    description: "Disallow the following scenarios when deploying `HorizontalPodAutoscalers` 1. Deployment of HorizontalPodAutoscalers with `.spec.minReplicas` or `.spec.maxReplicas` outside the ranges defined in the constraint 2. Deployment of HorizontalPodAutoscalers where the difference between `.spec.minReplicas` and `.spec.maxReplicas` is less than the configured `minimumReplicaSpread` 3. Deployment of HorizontalPodAutoscalers that do not reference a valid `scaleTargetRef` (e.g. Deployment, ReplicationController, ReplicaSet, StatefulSet).",
    parameterSchema: {
        "type": "object",
        "properties": {
            "enforceScaleTargetRef": {
                "description": "If set to true it validates the HPA scaleTargetRef exists",
                "type": "boolean"
            },
            "minimumReplicaSpread": {
                "description": "If configured it enforces the minReplicas and maxReplicas in an HPA must have a spread of at least this many replicas",
                "type": "integer"
            },
            "ranges": {
                "type": "array",
                "description": "Allowed ranges for numbers of replicas.  Values are inclusive.",
                "items": {
                    "type": "object",
                    "description": "A range of allowed replicas.  Values are inclusive.",
                    "properties": {
                        "min_replicas": {
                            "description": "The minimum number of replicas allowed, inclusive.",
                            "type": "integer"
                        },
                        "max_replicas": {
                            "description": "The maximum number of replicas allowed, inclusive.",
                            "type": "integer"
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters, inventory }) {
        if (review.kind.kind !== "HorizontalPodAutoscaler") return [];
        const hpa = review.object;
        const name = hpa.metadata?.name;
        const { minReplicas, maxReplicas, scaleTargetRef } = hpa.spec ?? {};
        const messages: string[] = [];
        const { ranges, minimumReplicaSpread } = parameters;
        // Like the library, replica checks need both bounds set on the HPA.
        const hasBounds = typeof minReplicas === "number" && typeof maxReplicas === "number";
        if (ranges !== undefined && hasBounds && !ranges.some((r) => within(r, minReplicas, maxReplicas))) {
            messages.push(
                `The ${hpa.kind} <${name}> minReplicas ${minReplicas} or maxReplicas ${maxReplicas} is not allowed. ` +
                    `Allowed ranges: ${regoFormat(ranges)}`,
            );
        }
        if (minimumReplicaSpread !== undefined && hasBounds && maxReplicas - minReplicas < minimumReplicaSpread) {
            messages.push(
                `The ${hpa.kind} <${name}> is configured with minReplicas ${minReplicas} and maxReplicas ${maxReplicas} ` +
                    `which is a spread of ${maxReplicas - minReplicas} replica(s). The spread must be at least ${minimumReplicaSpread} replica(s)`,
            );
        }
        if (parameters.enforceScaleTargetRef && scaleTargetRef && !targetExists(scaleTargetRef, review.namespace, inventory)) {
            messages.push(
                `The HorizontalPodAutoscaler <${name}> has a scaleTargetRef of <${scaleTargetRef.kind}/${scaleTargetRef.name}> ` +
                    `but it does not exist. The scaleTargetRef for the HorizontalPodAutoscaler must exist`,
            );
        }
        return messages.map((msg) => ({ msg }));
    },
};

function within(range: ReplicaRange, min: number, max: number): boolean {
    return (range.min_replicas ?? Number.NaN) <= min && (range.max_replicas ?? Number.NaN) >= max;
}

function targetExists(
    ref: { apiVersion?: string; kind?: string; name?: string },
    namespace: string | undefined,
    inventory: Inventory,
): boolean {
    if (!ref.kind || !ref.name) return false;
    const { group } = parseApiVersion(ref.apiVersion);
    return inventory
        .list(ref.kind, { group, namespace })
        .some((o) => o.metadata?.name === ref.name && o.apiVersion === ref.apiVersion);
}
