import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPHostProcess",
    template: "host-process",
    category: "pod-security-policy",
    description: "Disallows HostProcess containers for Windows pods. HostProcess containers enable privileged access on Windows nodes and must be disallowed in Baseline and Restricted policies. Corresponds to the windowsOptions.hostProcess field in a Pod's securityContext or container securityContext. For more information, see https://kubernetes.io/docs/concepts/security/pod-security-standards/",
    parameterSchema: {
        "type": "object",
        "description": "Disallows HostProcess containers for Windows pods. HostProcess containers enable privileged access on Windows nodes and must be disallowed in Baseline and Restricted policies. Corresponds to the windowsOptions.hostProcess field in a Pod's securityContext or container securityContext. For more information, see https://kubernetes.io/docs/concepts/security/pod-security-standards/",
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
        const pod = review.object;
        const messages: (string | undefined)[] = [];
        // The pod-level setting applies to every container, so exemptImages cannot exempt it.
        if (pod.spec?.securityContext?.windowsOptions?.hostProcess === true) {
            messages.push(rego`HostProcess is not allowed at pod level: ${pod.metadata?.name}`);
        }
        for (const { container } of checkedContainers(pod, parameters?.exemptImages)) {
            if (container.securityContext?.windowsOptions?.hostProcess === true) {
                messages.push(
                    rego`HostProcess container is not allowed: ${container.name}, securityContext.windowsOptions.hostProcess: true`,
                );
            }
        }
        return violations(messages);
    },
};
