import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

/** A digest reference: "@algorithm:hex", algorithm components joined by + . _ or -. */
const DIGEST = /@[a-z0-9]+([+._-][a-z0-9]+)*:[a-zA-Z0-9=_-]+/;

export const rule: TemplateRule<Params> = {
    kind: "K8sImageDigests",
    template: "imagedigests",
    category: "general",
    description: "Requires container images to contain a digest.\nhttps://kubernetes.io/docs/concepts/containers/images/",
    parameterSchema: {
        "type": "object",
        "description": "Requires container images to contain a digest.\nhttps://kubernetes.io/docs/concepts/containers/images/",
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
        const messages: (string | undefined)[] = [];
        for (const { container, kind } of checkedContainers(review.object, parameters.exemptImages)) {
            if (DIGEST.test(String(container.image ?? ""))) continue;
            // As the library: an absent image (or name) leaves the message, and the violation, undefined.
            messages.push(rego`${kind} <${container.name}> uses an image without a digest <${container.image}>`);
        }
        return violations(messages);
    },
};
