import type { TemplateRule } from "../types";
import { allContainers, regoFormat, violations } from "./lib/pod";

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
        const messages: string[] = [];
        for (const { container, kind } of allContainers(review.object)) {
            const image = String(container.image ?? "");
            if (!repos.some((repo) => image.startsWith(repo))) continue;
            messages.push(
                `${kind} <${container.name}> has an invalid image repo <${image}>, disallowed repos are ${regoFormat(repos)}`,
            );
        }
        return violations(messages);
    },
};
