import type { TemplateRule } from "../types";
import { violations } from "./lib/pod";

export interface Params {
    allowedRoles?: string[];
    disallowAuthenticated?: boolean;
}

const ANONYMOUS_SUBJECTS = ["system:unauthenticated", "system:anonymous"];

export const rule: TemplateRule<Params> = {
    kind: "K8sDisallowAnonymous",
    template: "disallowanonymous",
    category: "general",
    description: "Disallows associating ClusterRole and Role resources to the system:anonymous user and system:unauthenticated group.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "allowedRoles": {
                "description": "The list of ClusterRoles and Roles that may be associated with the `system:unauthenticated` group and `system:anonymous` user.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "disallowAuthenticated": {
                "description": "A boolean indicating whether `system:authenticated` should also be disallowed by this policy.",
                "type": "boolean",
                "default": false
            }
        }
    },
    validate({ review, parameters }) {
        const binding = review.object;
        const roleName = binding.roleRef?.name;
        if ((parameters.allowedRoles ?? []).includes(roleName)) return [];
        const disallowed = new Set(ANONYMOUS_SUBJECTS);
        if (parameters.disallowAuthenticated) disallowed.add("system:authenticated");
        const subjects: Array<{ name?: string } | null> = Array.isArray(binding.subjects) ? binding.subjects : [];
        const messages: string[] = [];
        for (const subject of subjects) {
            const name = subject?.name;
            if (typeof name !== "string" || !disallowed.has(name)) continue;
            messages.push(`${name} is not allowed as a subject name in ${binding.kind} ${binding.metadata?.name}`);
        }
        return violations(messages);
    },
};
