import type { TemplateRule } from "../types";
import { isSet, violations, rego } from "./lib/pod";

export interface Params {
    allowedFlexVolumes?: Array<{ driver?: string }>;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPFlexVolumes",
    template: "flexvolume-drivers",
    category: "pod-security-policy",
    description: "Controls the allowlist of FlexVolume drivers. Corresponds to the `allowedFlexVolumes` field in PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#flexvolume-drivers",
    parameterSchema: {
        "type": "object",
        "description": "Controls the allowlist of FlexVolume drivers. Corresponds to the `allowedFlexVolumes` field in PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#flexvolume-drivers",
        "properties": {
            "allowedFlexVolumes": {
                "type": "array",
                "description": "An array of AllowedFlexVolume objects.",
                "items": {
                    "type": "object",
                    "properties": {
                        "driver": {
                            "description": "The name of the FlexVolume driver.",
                            "type": "string"
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        const allowed = parameters?.allowedFlexVolumes;
        // Without allowedFlexVolumes the library's message cannot be built, so it reports nothing.
        if (!Array.isArray(allowed)) return [];
        const pod = review.object;
        const volumes = pod.spec?.volumes;
        if (!Array.isArray(volumes)) return [];
        const messages: (string | undefined)[] = [];
        for (const volume of volumes) {
            if (!isSet(volume?.flexVolume)) continue;
            const driver = volume.flexVolume?.driver;
            if (driver !== undefined && allowed.some((entry) => entry?.driver === driver)) continue;
            messages.push(
                rego`FlexVolume ${volume} is not allowed, pod: ${pod.metadata?.name}. Allowed drivers: ${allowed}`,
            );
        }
        return violations(messages);
    },
};
