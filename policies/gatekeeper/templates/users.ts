import type { K8sObject, TemplateRule } from "../types";
import { type Container, checkedContainers, isSet, regoFormat, violations } from "./lib/pod";

export interface IdRange {
    min?: number;
    max?: number;
}

export interface IdRule<R extends string> {
    rule?: R;
    ranges?: IdRange[];
}

export interface Params {
    exemptImages?: string[];
    runAsUser?: IdRule<"MustRunAs" | "MustRunAsNonRoot" | "RunAsAny">;
    runAsGroup?: IdRule<"MustRunAs" | "MayRunAs" | "RunAsAny">;
    supplementalGroups?: IdRule<"MustRunAs" | "MayRunAs" | "RunAsAny">;
    fsGroup?: IdRule<"MustRunAs" | "MayRunAs" | "RunAsAny">;
}

type GroupField = "runAsGroup" | "supplementalGroups" | "fsGroup";
const GROUP_FIELDS: readonly GroupField[] = ["runAsGroup", "supplementalGroups", "fsGroup"];

function inAnyRange(value: unknown, ranges: unknown): boolean {
    if (typeof value !== "number" || !Array.isArray(ranges)) return false;
    return ranges.some((range) => typeof range?.min === "number" && typeof range.max === "number" && range.min <= value && value <= range.max);
}

/** The container's securityContext value, else the pod's. */
function effectiveValue(field: string, container: Container, pod: K8sObject): any {
    const own = container.securityContext?.[field];
    return own !== undefined ? own : pod.spec?.securityContext?.[field];
}

function userViolation(params: IdRule<string>, container: Container, pod: K8sObject): string | undefined {
    const name = regoFormat(container.name);
    const user = effectiveValue("runAsUser", container, pod);
    const rule = params.rule;
    if (rule !== undefined && user !== undefined) {
        const accepted =
            rule === "RunAsAny" || (rule === "MustRunAsNonRoot" && user !== 0) || (rule === "MustRunAs" && inAnyRange(user, params.ranges));
        if (!accepted) {
            return `Container ${name} is attempting to run as disallowed user ${regoFormat(user)}. Allowed runAsUser: ${regoFormat(params)}`;
        }
    }
    if (isSet(user)) return undefined;
    if (rule === "MustRunAs") return `Container ${name} is attempting to run without a required securityContext/runAsUser`;
    if (rule === "MustRunAsNonRoot" && !isSet(effectiveValue("runAsNonRoot", container, pod))) {
        return `Container ${name} is attempting to run without a required securityContext/runAsNonRoot or securityContext/runAsUser != 0`;
    }
    return undefined;
}

function acceptsGroup(rule: string, value: unknown, ranges: unknown): boolean {
    if (rule === "RunAsAny") return true;
    return (rule === "MayRunAs" || rule === "MustRunAs") && inAnyRange(value, ranges);
}

function groupViolation(field: GroupField, params: IdRule<string>, container: Container, pod: K8sObject): string | undefined {
    const name = regoFormat(container.name);
    const allowed = `Allowed ${field}: ${regoFormat(params)}`;
    const value = effectiveValue(field, container, pod);
    const { rule, ranges } = params;
    // As in the library, values are only checked when the rule has ranges (RunAsAny needs none).
    if (rule !== undefined && value !== undefined && ranges !== undefined) {
        if (Array.isArray(value)) {
            if (value.some((id) => !acceptsGroup(rule, id, ranges))) {
                return `Container ${name} is attempting to run with disallowed supplementalGroups ${regoFormat(value)}. ${allowed}`;
            }
        } else if (!acceptsGroup(rule, value, ranges)) {
            return `Container ${name} is attempting to run as disallowed group ${regoFormat(value)}. ${allowed}`;
        }
    }
    if (!isSet(value) && rule === "MustRunAs") {
        return `Container ${name} is attempting to run without a required securityContext/${field}. ${allowed}`;
    }
    return undefined;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPAllowedUsers",
    template: "users",
    category: "pod-security-policy",
    description: "Controls the user and group IDs of the container and some volumes. Corresponds to the `runAsUser`, `runAsGroup`, `supplementalGroups`, and `fsGroup` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#users-and-groups",
    parameterSchema: {
        "type": "object",
        "description": "Controls the user and group IDs of the container and some volumes. Corresponds to the `runAsUser`, `runAsGroup`, `supplementalGroups`, and `fsGroup` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#users-and-groups",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "runAsUser": {
                "type": "object",
                "description": "Controls which user ID values are allowed in a Pod or container-level SecurityContext.",
                "properties": {
                    "rule": {
                        "type": "string",
                        "description": "A strategy for applying the runAsUser restriction.",
                        "enum": [
                            "MustRunAs",
                            "MustRunAsNonRoot",
                            "RunAsAny"
                        ]
                    },
                    "ranges": {
                        "type": "array",
                        "description": "A list of user ID ranges affected by the rule.",
                        "items": {
                            "type": "object",
                            "description": "The range of user IDs affected by the rule.",
                            "properties": {
                                "min": {
                                    "type": "integer",
                                    "description": "The minimum user ID in the range, inclusive."
                                },
                                "max": {
                                    "type": "integer",
                                    "description": "The maximum user ID in the range, inclusive."
                                }
                            }
                        }
                    }
                }
            },
            "runAsGroup": {
                "type": "object",
                "description": "Controls which group ID values are allowed in a Pod or container-level SecurityContext.",
                "properties": {
                    "rule": {
                        "type": "string",
                        "description": "A strategy for applying the runAsGroup restriction.",
                        "enum": [
                            "MustRunAs",
                            "MayRunAs",
                            "RunAsAny"
                        ]
                    },
                    "ranges": {
                        "type": "array",
                        "description": "A list of group ID ranges affected by the rule.",
                        "items": {
                            "type": "object",
                            "description": "The range of group IDs affected by the rule.",
                            "properties": {
                                "min": {
                                    "type": "integer",
                                    "description": "The minimum group ID in the range, inclusive."
                                },
                                "max": {
                                    "type": "integer",
                                    "description": "The maximum group ID in the range, inclusive."
                                }
                            }
                        }
                    }
                }
            },
            "supplementalGroups": {
                "type": "object",
                "description": "Controls the supplementalGroups values that are allowed in a Pod or container-level SecurityContext.",
                "properties": {
                    "rule": {
                        "type": "string",
                        "description": "A strategy for applying the supplementalGroups restriction.",
                        "enum": [
                            "MustRunAs",
                            "MayRunAs",
                            "RunAsAny"
                        ]
                    },
                    "ranges": {
                        "type": "array",
                        "description": "A list of group ID ranges affected by the rule.",
                        "items": {
                            "type": "object",
                            "description": "The range of group IDs affected by the rule.",
                            "properties": {
                                "min": {
                                    "type": "integer",
                                    "description": "The minimum group ID in the range, inclusive."
                                },
                                "max": {
                                    "type": "integer",
                                    "description": "The maximum group ID in the range, inclusive."
                                }
                            }
                        }
                    }
                }
            },
            "fsGroup": {
                "type": "object",
                "description": "Controls the fsGroup values that are allowed in a Pod or container-level SecurityContext.",
                "properties": {
                    "rule": {
                        "type": "string",
                        "description": "A strategy for applying the fsGroup restriction.",
                        "enum": [
                            "MustRunAs",
                            "MayRunAs",
                            "RunAsAny"
                        ]
                    },
                    "ranges": {
                        "type": "array",
                        "description": "A list of group ID ranges affected by the rule.",
                        "items": {
                            "type": "object",
                            "description": "The range of group IDs affected by the rule.",
                            "properties": {
                                "min": {
                                    "type": "integer",
                                    "description": "The minimum group ID in the range, inclusive."
                                },
                                "max": {
                                    "type": "integer",
                                    "description": "The maximum group ID in the range, inclusive."
                                }
                            }
                        }
                    }
                }
            }
        }
    },
    validate({ review, parameters }) {
        const params = parameters ?? {};
        const pod = review.object;
        const messages: string[] = [];
        for (const { container } of checkedContainers(pod, params.exemptImages)) {
            if (params.runAsUser && typeof params.runAsUser === "object") {
                const message = userViolation(params.runAsUser, container, pod);
                if (message) messages.push(message);
            }
            for (const field of GROUP_FIELDS) {
                const fieldParams = params[field];
                if (!fieldParams || typeof fieldParams !== "object") continue;
                const message = groupViolation(field, fieldParams, container, pod);
                if (message) messages.push(message);
            }
        }
        return violations(messages);
    },
};
