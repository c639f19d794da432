import type { TemplateRule } from "../types";
import { checkedContainers, isSet, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPPrivilegedContainer",
    template: "privileged-containers",
    category: "pod-security-policy",
    description: "Controls the ability of any container to enable privileged mode. Corresponds to the `privileged` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#privileged",
    parameterSchema: {
        "type": "object",
        "description": "Controls the ability of any container to enable privileged mode. Corresponds to the `privileged` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#privileged",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(review.object, parameters?.exemptImages)) {
            const securityContext = container.securityContext;
            if (isSet(securityContext?.privileged)) {
                messages.push(
                    rego`Privileged container is not allowed: ${container.name}, securityContext: ${securityContext}`,
                );
            }
        }
        return violations(messages);
    },
};
