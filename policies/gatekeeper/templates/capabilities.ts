import type { TemplateRule } from "../types";
import { type Container, type ContainerKind, checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
    allowedCapabilities?: string[];
    requiredDropCapabilities?: string[];
}

const LABELS: Record<ContainerKind, string> = {
    container: "container",
    initContainer: "init container",
    ephemeralContainer: "ephemeral container",
};

function lowerSet(list: unknown): Set<string> {
    const out = new Set<string>();
    if (Array.isArray(list)) for (const item of list) if (typeof item === "string") out.add(item.toLowerCase());
    return out;
}

function addsDisallowed(container: Container, allowed: Set<string>): boolean {
    if (allowed.has("*")) return false;
    for (const capability of lowerSet(container.securityContext?.capabilities?.add)) {
        if (!allowed.has(capability)) return true;
    }
    return false;
}

/** Dropping "ALL" satisfies any requirement; otherwise every required capability must be dropped. */
function missesDrop(container: Container, mustDrop: Set<string>): boolean {
    if (mustDrop.size === 0) return false;
    const dropped = lowerSet(container.securityContext?.capabilities?.drop);
    if (dropped.has("all")) return false;
    for (const capability of mustDrop) if (!dropped.has(capability)) return true;
    return false;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPCapabilities",
    template: "capabilities",
    category: "pod-security-policy",
    description: "Controls Linux capabilities on containers. Corresponds to the `allowedCapabilities` and `requiredDropCapabilities` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#capabilities",
    parameterSchema: {
        "type": "object",
        "description": "Controls Linux capabilities on containers. Corresponds to the `allowedCapabilities` and `requiredDropCapabilities` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#capabilities",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "allowedCapabilities": {
                "type": "array",
                "description": "A list of Linux capabilities that can be added to a container.",
                "items": {
                    "type": "string"
                }
            },
            "requiredDropCapabilities": {
                "type": "array",
                "description": "A list of Linux capabilities that are required to be dropped from a container.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const allowed = lowerSet(params.allowedCapabilities);
        const mustDrop = lowerSet(params.requiredDropCapabilities);
        const allowedText = params.allowedCapabilities === undefined ? "NONE" : params.allowedCapabilities;
        const messages: (string | undefined)[] = [];
        for (const { container, kind } of checkedContainers(review.object, params.exemptImages)) {
            // As the library's sprintf: without a container name there is no message, so no violation.
            if (addsDisallowed(container, allowed)) {
                messages.push(rego`${LABELS[kind]} <${container.name}> has a disallowed capability. Allowed capabilities are ${allowedText}`);
            }
            if (missesDrop(container, mustDrop)) {
                messages.push(rego`${LABELS[kind]} <${container.name}> is not dropping all required capabilities. Container must drop all of ${params.requiredDropCapabilities} or "ALL"`);
            }
        }
        return violations(messages);
    },
};
