import type { K8sObject, TemplateRule } from "../types";
import { type Container, checkedContainers, regoFormat, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    allowedProfiles?: string[];
}

const ANNOTATION_PREFIX = "container.apparmor.security.beta.kubernetes.io/";

/** appArmorProfile field → annotation syntax; undefined for an unknown type. */
function canonicalProfile(profile: any): string | undefined {
    if (profile === null || profile === undefined) return "runtime/default";
    switch (profile.type) {
        case "RuntimeDefault":
            return "runtime/default";
        case "Unconfined":
            return "unconfined";
        case "Localhost":
            return profile.localhostProfile === undefined ? undefined : `localhost/${regoFormat(profile.localhostProfile)}`;
        default:
            return undefined;
    }
}

/** Container field, then the container's annotation, then the pod field (unset: runtime/default). */
function effectiveProfile(pod: K8sObject, container: Container): string | undefined {
    const own = container.securityContext?.appArmorProfile;
    if (own !== undefined && own !== null) return canonicalProfile(own);
    const annotation = pod.metadata?.annotations?.[`${ANNOTATION_PREFIX}${container.name}`];
    if (annotation !== undefined) return annotation;
    return canonicalProfile(pod.spec?.securityContext?.appArmorProfile);
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPAppArmor",
    template: "apparmor",
    category: "pod-security-policy",
    description: "Configures an allow-list of AppArmor profiles for use by containers. This corresponds to specific annotations applied to a PodSecurityPolicy. For information on AppArmor, see https://kubernetes.io/docs/tutorials/clusters/apparmor/",
    parameterSchema: {
        "type": "object",
        "description": "Configures an allow-list of AppArmor profiles for use by containers. This corresponds to specific annotations applied to a PodSecurityPolicy. For information on AppArmor, see https://kubernetes.io/docs/tutorials/clusters/apparmor/",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "allowedProfiles": {
                "description": "An array of AppArmor profiles. Examples: `runtime/default`, `unconfined`.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const allowed = parameters?.allowedProfiles;
        // Without allowedProfiles the library's message cannot be built, so it reports nothing.
        if (!Array.isArray(allowed)) return [];
        const pod = review.object;
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(pod, parameters.exemptImages)) {
            const profile = effectiveProfile(pod, container);
            if (profile !== undefined && allowed.includes(profile)) continue;
            messages.push(
                rego`AppArmor profile is not allowed, pod: ${pod.metadata?.name}, container: ${container.name}. Allowed profiles: ${allowed}`,
            );
        }
        return violations(messages);
    },
};
