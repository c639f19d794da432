import type { TemplateRule } from "../types";
import { rego, violations } from "./lib/pod";

export interface Params {
    allowedSysctls?: string[];
    forbiddenSysctls?: string[];
}

/** `*` matches everything (a name that is not a string too, as in the Rego), `prefix*` a prefix, anything else itself. */
function matchesAny(sysctl: unknown, patterns: readonly string[]): boolean {
    for (const pattern of patterns) {
        if (typeof pattern !== "string") continue;
        if (pattern === "*" || pattern === sysctl) return true;
        if (typeof sysctl === "string" && pattern.endsWith("*") && sysctl.startsWith(pattern.slice(0, -1))) return true;
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
        const podName = pod.metadata?.name;
        const messages: (string | undefined)[] = [];
        for (const entry of sysctls) {
            // As the library's Rego: each entry's name (null included); messages as its sprintf.
            const name = entry?.name;
            if (name === undefined) continue;
            if (Array.isArray(forbidden) && matchesAny(name, forbidden)) {
                messages.push(rego`The sysctl ${name} is not allowed, pod: ${podName}. Forbidden sysctls: ${forbidden}`);
            }
            // allowedSysctls is an allow-list only when given; an empty list allows nothing.
            if (Array.isArray(allowed) && !matchesAny(name, allowed)) {
                messages.push(rego`The sysctl ${name} is not explicitly allowed, pod: ${podName}. Allowed sysctls: ${allowed}`);
            }
        }
        return violations(messages);
    },
};
