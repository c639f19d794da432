import type { TemplateRule } from "../types";
import { allContainers, violations, rego } from "./lib/pod";

export interface Params {
    repos?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sAllowedRepos",
    template: "allowedrepos",
    category: "general",
    description: "Requires container images to begin with a string from the specified list. To prevent bypasses, ensure a '/' is added when specifying DockerHub repositories or custom registries. If exact matches or glob-like syntax are preferred, use the k8sallowedreposv2 policy.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "repos": {
                "description": "The list of prefixes a container image is allowed to have.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        // Without repos the message's sprintf is undefined: no violation (as gator reports).
        const repos = parameters.repos;
        const messages: (string | undefined)[] = [];
        for (const { container, kind } of allContainers(review.object)) {
            const image = String(container.image ?? "");
            if ((repos ?? []).some((repo) => image.startsWith(repo))) continue;
            messages.push(
                rego`${kind} <${container.name}> has an invalid image repo <${container.image}>, allowed repos are ${repos}`,
            );
        }
        return violations(messages);
    },
};
