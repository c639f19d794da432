import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    procMount?: "Default" | "Unmasked";
}

/** The allowed type, lower-cased; anything but Default/Unmasked (or nothing) means "default". */
function allowedProcMount(params: Params): "default" | "unmasked" {
    const value = typeof params.procMount === "string" ? params.procMount.toLowerCase() : "";
    return value === "unmasked" ? "unmasked" : "default";
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPProcMount",
    template: "proc-mount",
    category: "pod-security-policy",
    description: "Controls the allowed `procMount` types for the container. Corresponds to the `allowedProcMountTypes` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#allowedprocmounttypes",
    parameterSchema: {
        "type": "object",
        "description": "Controls the allowed `procMount` types for the container. Corresponds to the `allowedProcMountTypes` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#allowedprocmounttypes",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "procMount": {
                "type": "string",
                "description": "Defines the strategy for the security exposure of certain paths in `/proc` by the container runtime. Setting to `Default` uses the runtime defaults, where `Unmasked` bypasses the default behavior.",
                "enum": [
                    "Default",
                    "Unmasked"
                ]
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const allowed = allowedProcMount(params);
        if (allowed === "unmasked") return [];
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(review.object, params.exemptImages)) {
            const procMount = container.securityContext?.procMount;
            // The library only looks at containers whose procMount is present and not null.
            if (procMount === undefined || procMount === null) continue;
            if (typeof procMount === "string" && procMount.toLowerCase() === "default") continue;
            messages.push(
                rego`ProcMount type is not allowed, container: ${container.name}. Allowed procMount types: ${allowed}`,
            );
        }
        return violations(messages);
    },
};
