import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPReadOnlyRootFilesystem",
    template: "read-only-root-filesystem",
    category: "pod-security-policy",
    description: "Requires the use of a read-only root file system by pod containers. Corresponds to the `readOnlyRootFilesystem` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
    parameterSchema: {
        "type": "object",
        "description": "Requires the use of a read-only root file system by pod containers. Corresponds to the `readOnlyRootFilesystem` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
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
            if (container.securityContext?.readOnlyRootFilesystem !== true) {
                messages.push(rego`only read-only root filesystem container is allowed: ${container.name}`);
            }
        }
        return violations(messages);
    },
};
