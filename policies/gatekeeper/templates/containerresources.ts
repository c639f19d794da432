import type { TemplateRule } from "../types";
import { checkedContainers, isSet, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    limits?: Array<"cpu" | "memory">;
    requests?: Array<"cpu" | "memory">;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sRequiredResources",
    template: "containerresources",
    category: "general",
    description: "Requires containers to have defined resources set.\nhttps://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
    parameterSchema: {
        "type": "object",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "limits": {
                "type": "array",
                "description": "A list of limits that should be enforced (`cpu`, `memory`, or both).",
                "items": {
                    "type": "string",
                    "enum": [
                        "cpu",
                        "memory"
                    ]
                }
            },
            "requests": {
                "type": "array",
                "description": "A list of requests that should be enforced (`cpu`, `memory`, or both).",
                "items": {
                    "type": "string",
                    "enum": [
                        "cpu",
                        "memory"
                    ]
                }
            }
        }
    },
    validate({ review, parameters }) {
        const messages: (string | undefined)[] = [];
        // Ephemeral containers cannot set resources.
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (kind === "ephemeralContainer") continue;
            for (const section of ["limits", "requests"] as const) {
                const missing = missingResources(container.resources?.[section], parameters[section]);
                if (missing.size > 0) {
                    messages.push(rego`container <${container.name}> does not have <${missing}> ${section} defined`);
                }
            }
        }
        return violations(messages);
    },
};

function missingResources(provided: Record<string, unknown> | undefined, required: readonly string[] | undefined): Set<string> {
    const missing = new Set<string>();
    for (const resource of required ?? []) {
        if (!provided || typeof provided !== "object" || !isSet(provided[resource])) missing.add(resource);
    }
    return missing;
}
