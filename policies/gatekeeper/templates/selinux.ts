import type { TemplateRule } from "../types";
import { checkedContainers, isSet, violations, rego } from "./lib/pod";

export interface SELinuxOptions {
    level?: string;
    role?: string;
    type?: string;
    user?: string;
}

export interface Params {
    exemptImages?: string[];
    allowedSELinuxOptions?: SELinuxOptions[];
}

const FIELDS = ["level", "role", "type", "user"] as const;

/** Allowed when one entry matches every field the options set (fields left unset match anything). */
function optionsAllowed(options: any, allowList: readonly SELinuxOptions[]): boolean {
    return allowList.some(
        (entry) => entry && FIELDS.every((field) => !isSet(options?.[field]) || entry[field] === options[field]),
    );
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPSELinuxV2",
    template: "selinux",
    category: "pod-security-policy",
    description: "Defines an allow-list of seLinuxOptions configurations for pod containers. Corresponds to a PodSecurityPolicy requiring SELinux configs. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#selinux",
    parameterSchema: {
        "type": "object",
        "description": "Defines an allow-list of seLinuxOptions configurations for pod containers. Corresponds to a PodSecurityPolicy requiring SELinux configs. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#selinux",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "allowedSELinuxOptions": {
                "type": "array",
                "description": "An allow-list of SELinux options configurations.",
                "items": {
                    "type": "object",
                    "description": "An allowed configuration of SELinux options for a pod container.",
                    "properties": {
                        "level": {
                            "type": "string",
                            "description": "An SELinux level."
                        },
                        "role": {
                            "type": "string",
                            "description": "An SELinux role."
                        },
                        "type": {
                            "type": "string",
                            "description": "An SELinux type."
                        },
                        "user": {
                            "type": "string",
                            "description": "An SELinux user."
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        const allowList = parameters?.allowedSELinuxOptions;
        // Without allowedSELinuxOptions the library's message cannot be built, so it reports nothing.
        if (!Array.isArray(allowList)) return [];
        const pod = review.object;
        const podName = pod.metadata?.name;
        const messages: (string | undefined)[] = [];
        const podOptions = pod.spec?.securityContext?.seLinuxOptions;
        if (isSet(podOptions) && !optionsAllowed(podOptions, allowList)) {
            messages.push(rego`SELinux options is not allowed, pod: ${podName}. Allowed options: ${allowList}`);
        }
        for (const { container } of checkedContainers(pod, parameters.exemptImages)) {
            const options = container.securityContext?.seLinuxOptions;
            if (isSet(options) && !optionsAllowed(options, allowList)) {
                // The library's text: "container: <name>".
                messages.push(rego`SELinux options is not allowed, pod: ${podName}, container: ${container.name}. Allowed options: ${allowList}`);
            }
        }
        return violations(messages);
    },
};
