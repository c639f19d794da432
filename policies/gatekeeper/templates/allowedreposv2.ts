import type { TemplateRule } from "../types";
import { allContainers, isExempt, violations, rego } from "./lib/pod";

export interface Params {
    allowedImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sAllowedReposv2",
    template: "allowedreposv2",
    category: "general",
    description: "This policy enforces that container images must begin with a string from a specified list. The updated version, K8sAllowedReposv2, introduces support for exact match and glob-like syntax to enhance security: 1. Exact Match: By default, if the * character is not specified, the policy strictly checks for an exact match of the full registry, repository, and/or the image name. 2. Glob-like Syntax: Adding * at the end of a prefix allows prefix-based matching (e.g., registry.example.com/project/*). Only the * wildcard at the end of a string is supported. 3. Security Note: To avoid bypasses scenarios, ensure prefixes include a trailing / where appropriate (e.g., registry.example.com/project/*).",
    parameterSchema: {
        "type": "object",
        "properties": {
            "allowedImages": {
                "description": "A list of allowed container image prefixes. Supports exact matches and prefixes ending with '*'.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        // Without allowedImages the message's sprintf is undefined: no violation (as gator reports).
        const allowed = parameters.allowedImages;
        const messages: (string | undefined)[] = [];
        for (const { container, kind } of allContainers(review.object)) {
            // Same rule as exemptImages: exact match, or prefix when the entry ends in "*".
            if (isExempt(container.image, allowed ?? [])) continue;
            messages.push(
                rego`${kind} <${container.name}> has an invalid image <${container.image}>, allowed images are ${allowed}`,
            );
        }
        return violations(messages);
    },
};
