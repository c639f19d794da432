import type { TemplateRule } from "../types";
import { checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    tags?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sDisallowedTags",
    template: "disallowedtags",
    category: "general",
    description: "Requires container images to have an image tag different from the ones in the specified list.\nhttps://kubernetes.io/docs/concepts/containers/images/#image-names",
    parameterSchema: {
        "type": "object",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`. It is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "tags": {
                "type": "array",
                "description": "Disallowed container image tags.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const tags = parameters.tags ?? [];
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(review.object, parameters.exemptImages)) {
            // strings.any_suffix_match and split fail on an image that is not a string (absent,
            // null): both rules are undefined there, as gator reports.
            if (typeof container.image !== "string") continue;
            const image = container.image;
            if (tags.some((tag) => image.endsWith(`:${tag}`))) {
                messages.push(
                    rego`container <${container.name}> uses a disallowed tag <${container.image}>; disallowed tags are ${tags}`,
                );
            }
            if (!hasTag(image)) messages.push(rego`container <${container.name}> didn't specify an image tag <${container.image}>`);
        }
        return violations(messages);
    },
};

/**
 * A tag (or digest) is a ":" in the last path component: in "registry:443/app" the colon
 * belongs to the registry's port, so that image has no tag.
 */
function hasTag(image: string): boolean {
    return image.slice(image.lastIndexOf("/") + 1).includes(":");
}
