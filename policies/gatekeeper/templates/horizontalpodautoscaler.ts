import type { Inventory, TemplateRule } from "../types";
import { rego, regoLessOrEqual, violations } from "./lib/pod";
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
        const spec = hpa.spec ?? {};
        const { minReplicas, maxReplicas, scaleTargetRef } = spec;
        const messages: (string | undefined)[] = [];
        const { ranges, minimumReplicaSpread } = parameters;
        // As the library's Rego: no range holds both bounds (no ranges, an empty list, or a bound
        // that is absent or null). The library's format has six %v for five values, so Go's
        // fmt renders the ranges after "not allowed:" and %!v(MISSING) after "Allowed ranges:".
        if (!(Array.isArray(ranges) && ranges.length > 0 && ranges.some((r) => within(r, minReplicas, maxReplicas)))) {
            messages.push(rego`The ${hpa.kind} <${name}> minReplicas ${minReplicas} or maxReplicas ${maxReplicas} is not allowed: ${ranges}. Allowed ranges: %!v(MISSING)`);
        }
        const spread = typeof minReplicas === "number" && typeof maxReplicas === "number" ? maxReplicas - minReplicas : undefined;
        if (minimumReplicaSpread !== undefined && !(spread !== undefined && spread >= minimumReplicaSpread)) {
            messages.push(
                rego`The ${hpa.kind} <${name}> is configured with minReplicas ${minReplicas} and maxReplicas ${maxReplicas} which is a spread of ${spread} replica(s). The spread must be at least ${minimumReplicaSpread} replica(s)`,
            );
        }
        if (parameters.enforceScaleTargetRef && !targetExists(scaleTargetRef ?? {}, review.namespace, inventory)) {
            messages.push(
                rego`The HorizontalPodAutoscaler <${name}> has a scaleTargetRef of <${scaleTargetRef?.kind}/${scaleTargetRef?.name}> but it does not exist. The scaleTargetRef for the HorizontalPodAutoscaler must exist`,
            );
        }
        return violations(messages);
    },
};

function within(range: ReplicaRange, min: unknown, max: unknown): boolean {
    return regoLessOrEqual(range?.min_replicas, min) && regoLessOrEqual(max, range?.max_replicas);
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
