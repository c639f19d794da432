import type { TemplateRule } from "../types";
import { allContainers, violations, rego } from "./lib/pod";

export interface Params {
    repos?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sDisallowedRepos",
    template: "disallowedrepos",
    category: "general",
    description: "Disallowed container repositories that begin with a string from the specified list.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "repos": {
                "description": "The list of prefixes a container image is not allowed to have.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const repos = parameters.repos ?? [];
        const messages: (string | undefined)[] = [];
        for (const { container, kind } of allContainers(review.object)) {
            const image = String(container.image ?? "");
            if (!repos.some((repo) => image.startsWith(repo))) continue;
            messages.push(
                rego`${kind} <${container.name}> has an invalid image repo <${container.image}>, disallowed repos are ${repos}`,
            );
        }
        return violations(messages);
    },
};
