import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPAllowPrivilegeEscalationContainer",
    template: "allow-privilege-escalation",
    category: "pod-security-policy",
    description: "Controls restricting escalation to root privileges. Corresponds to the `allowPrivilegeEscalation` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#privilege-escalation",
    parameterSchema: {
        "type": "object",
        "description": "Controls restricting escalation to root privileges. Corresponds to the `allowPrivilegeEscalation` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#privilege-escalation",
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
            // Escalation is only ruled out by an explicit `false`: unset means allowed by Kubernetes.
            if (container.securityContext?.allowPrivilegeEscalation !== false) {
                messages.push(rego`Privilege escalation container is not allowed: ${container.name}`);
            }
        }
        return violations(messages);
    },
};
