import type { TemplateRule } from "../types";
import { regoFormat, violations } from "./lib/pod";

export interface Params {
    allowedSysctls?: string[];
    forbiddenSysctls?: string[];
}

/** `*` matches everything, `prefix*` a prefix, anything else itself. */
function matchesAny(sysctl: string, patterns: readonly string[]): boolean {
    for (const pattern of patterns) {
        if (typeof pattern !== "string") continue;
        if (pattern === "*" || pattern === sysctl) return true;
        if (pattern.endsWith("*") && sysctl.startsWith(pattern.slice(0, -1))) return true;
    }
    return false;
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPForbiddenSysctls",
    template: "forbidden-sysctls",
    category: "pod-security-policy",
    description: "Controls the `sysctl` profile used by containers. Corresponds to the `allowedUnsafeSysctls` and `forbiddenSysctls` fields in a PodSecurityPolicy. When specified, any sysctl not in the `allowedSysctls` parameter is considered to be forbidden. The `forbiddenSysctls` parameter takes precedence over the `allowedSysctls` parameter. For more information, see https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/",
    parameterSchema: {
        "type": "object",
        "description": "Controls the `sysctl` profile used by containers. Corresponds to the `allowedUnsafeSysctls` and `forbiddenSysctls` fields in a PodSecurityPolicy. When specified, any sysctl not in the `allowedSysctls` parameter is considered to be forbidden. The `forbiddenSysctls` parameter takes precedence over the `allowedSysctls` parameter. For more information, see https://kubernetes.io/docs/tasks/administer-cluster/sysctl-cluster/",
        "properties": {
            "allowedSysctls": {
                "type": "array",
                "description": "An allow-list of sysctls. `*` allows all sysctls not listed in the `forbiddenSysctls` parameter.",
                "items": {
                    "type": "string"
                }
            },
            "forbiddenSysctls": {
                "type": "array",
                "description": "A disallow-list of sysctls. `*` forbids all sysctls.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const pod = review.object;
        const sysctls = pod.spec?.securityContext?.sysctls;
        if (!Array.isArray(sysctls)) return [];
        const { forbiddenSysctls: forbidden, allowedSysctls: allowed } = parameters ?? {};
        const podName = regoFormat(pod.metadata?.name);
        const messages: string[] = [];
        for (const entry of sysctls) {
            const name = entry?.name;
            if (name === undefined) continue;
            const text = regoFormat(name);
            if (Array.isArray(forbidden) && matchesAny(text, forbidden)) {
                messages.push(`The sysctl ${text} is not allowed, pod: ${podName}. Forbidden sysctls: ${regoFormat(forbidden)}`);
            }
            // allowedSysctls is an allow-list only when given; an empty list allows nothing.
            if (Array.isArray(allowed) && !matchesAny(text, allowed)) {
                messages.push(
                    `The sysctl ${text} is not explicitly allowed, pod: ${podName}. Allowed sysctls: ${regoFormat(allowed)}`,
                );
            }
        }
        return violations(messages);
    },
};
