import type { TemplateRule } from "../types";
import { resourceSectionMessages } from "../engine/container-resources";
import { parseBytesMillis, parseCpuMillis } from "../engine/quantity";
import { checkedContainers, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    cpu?: string;
    memory?: string;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sContainerRequests",
    template: "containerrequests",
    category: "general",
    description: "Requires containers to have memory and CPU requests set and constrains requests to be within the specified maximum values.\nhttps://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
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
                "description": "The maximum allowed cpu request on a Pod, exclusive.",
                "type": "string"
            },
            "memory": {
                "description": "The maximum allowed memory request on a Pod, exclusive.",
                "type": "string"
            }
        }
    },
    validate({ review, parameters }) {
        const checks = [
            { resource: "cpu", parse: parseCpuMillis, max: parameters.cpu },
            { resource: "memory", parse: parseBytesMillis, max: parameters.memory },
        ];
        const messages: string[] = [];
        // Ephemeral containers cannot set resources.
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (kind === "ephemeralContainer") continue;
            messages.push(...resourceSectionMessages(container, "requests", checks));
        }
        return violations(messages);
    },
};
