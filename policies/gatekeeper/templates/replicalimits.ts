import type { TemplateRule } from "../types";
import { regoFormat } from "./lib/pod";

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
        const replicas = obj.spec?.replicas;
        // Only objects that set spec.replicas are checked; no ranges allows no replica count at all.
        if (replicas === undefined || replicas === null) return [];
        const ranges = parameters.ranges ?? [];
        if (ranges.some((r) => (r.min_replicas ?? Number.NaN) <= replicas && (r.max_replicas ?? Number.NaN) >= replicas)) {
            return [];
        }
        return [
            {
                msg: `The provided number of replicas is not allowed for ${obj.kind}: ${obj.metadata?.name}. Allowed ranges: ${regoFormat(parameters)}`,
            },
        ];
    },
};
