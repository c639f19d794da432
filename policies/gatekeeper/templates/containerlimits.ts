import type { TemplateRule } from "../types";
import { resourceSectionMessages, type ResourceCheck } from "../engine/container-resources";
import { parseBytesMillis, parseCpuMillis } from "../engine/quantity";
import { checkedContainers, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    cpu?: string;
    memory?: string;
}

/** cpu: "-1" turns every CPU check off (limits without CPU are then allowed). */
const CPU_DISABLED = "-1";

export const rule: TemplateRule<Params> = {
    kind: "K8sContainerLimits",
    template: "containerlimits",
    category: "general",
    description: "Requires containers to have memory and CPU limits set and constrains limits to be within the specified maximum values.\nhttps://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
    parameterSchema: {
        "type": "object",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "cpu": {
                "description": "The maximum allowed cpu limit on a Pod, exclusive. Set to -1 to disable.",
                "type": "string"
            },
            "memory": {
                "description": "The maximum allowed memory limit on a Pod, exclusive.",
                "type": "string"
            }
        }
    },
    validate({ review, parameters }) {
        const checks: ResourceCheck[] = [];
        // `input.parameters.cpu != "-1"` guards every CPU rule: undefined (no CPU rule) when cpu is absent.
        if (parameters.cpu !== undefined && parameters.cpu !== CPU_DISABLED) checks.push({ resource: "cpu", parse: parseCpuMillis, max: parameters.cpu });
        checks.push({ resource: "memory", parse: parseBytesMillis, max: parameters.memory });
        const messages: string[] = [];
        // Ephemeral containers cannot set resources.
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (kind === "ephemeralContainer") continue;
            messages.push(...resourceSectionMessages(container, "limits", checks));
        }
        return violations(messages);
    },
};
