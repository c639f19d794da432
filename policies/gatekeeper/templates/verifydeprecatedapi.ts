import type { TemplateRule } from "../types";
import { rego, violations } from "./lib/pod";

export interface DeprecatedApi {
    deprecatedAPI?: string;
    kinds?: string[];
    targetAPI?: string;
}

export interface Params {
    kvs?: DeprecatedApi[];
    k8sVersion?: number;
}

/** targetAPI "None" marks an API removed without replacement. */
const NO_REPLACEMENT = "None";

export const rule: TemplateRule<Params> = {
    kind: "VerifyDeprecatedAPI",
    template: "verifydeprecatedapi",
    category: "general",
    description: "Verifies deprecated Kubernetes APIs to ensure all the API versions are up to date. This template does not apply to audit as audit looks at the resources which are already present in the cluster with non-deprecated API versions.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "kvs": {
                "type": "array",
                "description": "Deprecated api versions and corresponding kinds",
                "items": {
                    "type": "object",
                    "properties": {
                        "deprecatedAPI": {
                            "type": "string",
                            "description": "deprecated api",
                            "example": "flowcontrol.apiserver.k8s.io/v1beta2"
                        },
                        "kinds": {
                            "type": "array",
                            "items": {
                                "type": "string"
                            },
                            "description": "impacted list of kinds",
                            "example": "[\"FlowSchema\", \"PriorityLevelConfiguration\"]"
                        },
                        "targetAPI": {
                            "type": "string",
                            "description": "target api",
                            "example": "flowcontrol.apiserver.k8s.io/v1beta3"
                        }
                    }
                }
            },
            "k8sVersion": {
                "type": "number",
                "description": "kubernetes version"
            }
        }
    },
    validate({ review, parameters }) {
        const { apiVersion, kind } = review.object;
        const messages: (string | undefined)[] = [];
        for (const entry of parameters.kvs ?? []) {
            if (entry.deprecatedAPI !== apiVersion || !(entry.kinds ?? []).includes(kind ?? "")) continue;
            // get_message(kind, apiVersion, k8sVersion, targetAPI) is undefined when an argument is
            // (no k8sVersion, no targetAPI): no violation, as gator reports.
            if (entry.targetAPI === undefined) continue;
            messages.push(
                entry.targetAPI === NO_REPLACEMENT
                    ? rego`API ${kind} for ${apiVersion} is deprecated in Kubernetes version ${parameters.k8sVersion}, please see Kubernetes API deprecation guide`
                    : rego`API ${kind} for ${apiVersion} is deprecated in Kubernetes version ${parameters.k8sVersion}, please use ${entry.targetAPI} instead`,
            );
        }
        return violations(messages);
    },
};
