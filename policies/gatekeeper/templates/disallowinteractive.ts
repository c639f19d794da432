import type { TemplateRule } from "../types";
import { checkedContainers, rego, violations } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sDisallowInteractiveTTY",
    template: "disallowinteractive",
    category: "general",
    description: "Requires that objects have the fields `spec.tty` and `spec.stdin` set to false or unset.",
    parameterSchema: {
        "type": "object",
        "description": "Controls use of fields related to gaining an interactive session. Corresponds to the `tty` and `stdin` fields in the Pod `spec.containers`, `spec.ephemeralContainers`, and `spec.initContainers`.",
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
        for (const { container } of checkedContainers(review.object, parameters.exemptImages)) {
            if (!isOn(container.stdin) && !isOn(container.tty)) continue;
            // Without a name or an image the sprintf is undefined: no violation, as gator reports.
            messages.push(rego`Containers using tty or stdin (${container.name}) are not allowed running image: ${container.image}`);
        }
        return violations(messages);
    },
};

/** has_field(c, f) and not c[f] == false: anything but unset or false turns the field on (null included). */
function isOn(value: unknown): boolean {
    return value !== undefined && value !== false;
}
