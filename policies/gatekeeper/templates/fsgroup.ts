import type { TemplateRule } from "../types";
import { isSet, violations, rego } from "./lib/pod";

export interface IdRange {
    min?: number;
    max?: number;
}

export interface Params {
    rule?: "MayRunAs" | "MustRunAs" | "RunAsAny";
    ranges?: IdRange[];
}

function inAnyRange(value: unknown, ranges: IdRange[] | undefined): boolean {
    if (typeof value !== "number" || !Array.isArray(ranges)) return false;
    return ranges.some((range) => typeof range?.min === "number" && typeof range.max === "number" && range.min <= value && value <= range.max);
}

function fsGroupAllowed(params: Params, securityContext: any): boolean {
    switch (params.rule) {
        case "RunAsAny":
            return true;
        case "MustRunAs":
            return inAnyRange(securityContext?.fsGroup, params.ranges);
        case "MayRunAs":
            return !isSet(securityContext) || !isSet(securityContext?.fsGroup) || inAnyRange(securityContext.fsGroup, params.ranges);
        default:
            // The library's violation requires parameters.rule (has_field): without one nothing is reported.
            return true;
    }
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPFSGroup",
    template: "fsgroup",
    category: "pod-security-policy",
    description: "Controls allocating an FSGroup that owns the Pod's volumes. Corresponds to the `fsGroup` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
    parameterSchema: {
        "type": "object",
        "description": "Controls allocating an FSGroup that owns the Pod's volumes. Corresponds to the `fsGroup` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
        "properties": {
            "rule": {
                "description": "An FSGroup rule name.",
                "enum": [
                    "MayRunAs",
                    "MustRunAs",
                    "RunAsAny"
                ],
                "type": "string"
            },
            "ranges": {
                "type": "array",
                "description": "GID ranges affected by the rule.",
                "items": {
                    "type": "object",
                    "properties": {
                        "min": {
                            "description": "The minimum GID in the range, inclusive.",
                            "type": "integer"
                        },
                        "max": {
                            "description": "The maximum GID in the range, inclusive.",
                            "type": "integer"
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const pod = review.object;
        if (!pod.spec || fsGroupAllowed(params, pod.spec.securityContext)) return [];
        return violations([rego`The provided pod spec fsGroup is not allowed, pod: ${pod.metadata?.name}. Allowed fsGroup: ${params}`]);
    },
};
