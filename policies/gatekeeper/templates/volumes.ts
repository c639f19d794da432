import type { TemplateRule } from "../types";
import { isSet, violations, rego } from "./lib/pod";

export interface Params {
    volumes?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPVolumeTypes",
    template: "volumes",
    category: "pod-security-policy",
    description: "Restricts mountable volume types to those specified by the user. Corresponds to the `volumes` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
    parameterSchema: {
        "type": "object",
        "description": "Restricts mountable volume types to those specified by the user. Corresponds to the `volumes` field in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#volumes-and-file-systems",
        "properties": {
            "volumes": {
                "description": "`volumes` is an array of volume types. All volume types can be enabled using `*`.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const allowed = parameters?.volumes;
        // Without volumes the library's message cannot be built, so it reports nothing.
        if (!Array.isArray(allowed) || allowed.includes("*")) return [];
        const pod = review.object;
        const volumes = pod.spec?.volumes;
        if (!Array.isArray(volumes)) return [];
        const messages: (string | undefined)[] = [];
        for (const volume of volumes) {
            if (!volume || typeof volume !== "object") continue;
            for (const type of Object.keys(volume)) {
                if (type === "name" || !isSet(volume[type]) || allowed.includes(type)) continue;
                messages.push(rego`The volume type ${type} is not allowed, pod: ${pod.metadata?.name}. Allowed volume types: ${allowed}`);
            }
        }
        return violations(messages);
    },
};
