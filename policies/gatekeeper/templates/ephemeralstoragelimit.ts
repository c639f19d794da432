import type { TemplateRule } from "../types";
import { resourceSectionMessages } from "../engine/container-resources";
import { parseBytesMillis } from "../engine/quantity";
import { checkedContainers, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    "ephemeral-storage"?: string;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sContainerEphemeralStorageLimit",
    template: "ephemeralstoragelimit",
    category: "general",
    description: "Requires containers to have an ephemeral storage limit set and constrains the limit to be within the specified maximum values.\nhttps://kubernetes.io/docs/concepts/configuration/manage-resources-containers/",
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
            "ephemeral-storage": {
                "description": "The maximum allowed ephemeral storage limit on a Pod, exclusive.",
                "type": "string"
            }
        }
    },
    validate({ review, parameters }) {
        const checks = [{ resource: "ephemeral-storage", parse: parseBytesMillis, max: parameters["ephemeral-storage"] }];
        const messages: string[] = [];
        // Ephemeral containers cannot set resources.
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (kind === "ephemeralContainer") continue;
            messages.push(...resourceSectionMessages(container, "limits", checks));
        }
        return violations(messages);
    },
};
