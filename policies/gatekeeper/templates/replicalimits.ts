import type { TemplateRule } from "../types";
import { rego, regoLessOrEqual, violations } from "./lib/pod";

export interface ReplicaRange {
    min_replicas?: number;
    max_replicas?: number;
}

export interface Params {
    ranges?: ReplicaRange[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sReplicaLimits",
    template: "replicalimits",
    category: "general",
    description: "Requires that objects with the field `spec.replicas` (Deployments, ReplicaSets, etc.) specify a number of replicas within defined ranges.",
    parameterSchema: {
        "type": "object",
        "properties": {
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
    validate({ review, parameters }) {
        const obj = review.object;
        // As the library: every reviewed object with a spec is checked; replicas that are absent,
        // null or outside every range (or no ranges at all) are not allowed.
        const spec = obj.spec;
        if (spec === undefined) return [];
        const replicas = spec?.replicas;
        const ranges = parameters.ranges;
        const within = (r: ReplicaRange) => regoLessOrEqual(r?.min_replicas, replicas) && regoLessOrEqual(replicas, r?.max_replicas);
        if (Array.isArray(ranges) && ranges.length > 0 && ranges.some(within)) return [];
        return violations([rego`The provided number of replicas is not allowed for ${review.kind.kind}: ${obj.metadata?.name}. Allowed ranges: ${parameters}`]);
    },
};
