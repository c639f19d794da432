import type { TemplateRule } from "../types";
import { checkedContainers, isSet, violations, rego, regoLessOrEqual } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    hostNetwork?: boolean;
    min?: number;
    max?: number;
}

/**
 * As the library's Rego (`hostPort < min`, `hostPort > max`) with Rego's ordering across types: a
 * hostPort of null is below any min, a string hostPort is above any max; an absent bound checks nothing.
 */
function hostPortOutOfRange(port: unknown, params: Params): boolean {
    if (port === undefined) return false;
    const below = params.min !== undefined && !regoLessOrEqual(params.min, port);
    const above = params.max !== undefined && !regoLessOrEqual(port, params.max);
    return below || above;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPHostNetworkingPorts",
    template: "host-network-ports",
    category: "pod-security-policy",
    description: "Controls usage of host network namespace by pod containers. HostNetwork verification happens without exception for exemptImages. Specific ports must be specified. Corresponds to the `hostNetwork` and `hostPorts` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#host-namespaces",
    parameterSchema: {
        "type": "object",
        "description": "Controls usage of host network namespace by pod containers. HostNetwork verification happens without exception for exemptImages. Specific ports must be specified. Corresponds to the `hostNetwork` and `hostPorts` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#host-namespaces",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "hostNetwork": {
                "description": "Determines if the policy allows the use of HostNetwork in the pod spec.",
                "type": "boolean"
            },
            "min": {
                "description": "The start of the allowed port range, inclusive.",
                "type": "integer"
            },
            "max": {
                "description": "The end of the allowed port range, inclusive.",
                "type": "integer"
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const pod = review.object;
        // hostNetwork is a pod-level setting: exemptImages do not apply to it.
        let violating = !isSet(params.hostNetwork) && isSet(pod.spec?.hostNetwork);
        if (!violating) {
            violating = checkedContainers(pod, params.exemptImages).some(
                ({ container }) =>
                    Array.isArray(container.ports) && container.ports.some((port: any) => hostPortOutOfRange(port?.hostPort, params)),
            );
        }
        if (!violating) return [];
        return violations([
            rego`The specified hostNetwork and hostPort are not allowed, pod: ${pod.metadata?.name}. Allowed values: ${params}`,
        ]);
    },
};
