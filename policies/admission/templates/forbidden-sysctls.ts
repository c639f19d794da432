import type { Params } from "../../gatekeeper/templates/forbidden-sysctls";
import { get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** The template's sysctl patterns: "*" any, "prefix*" a prefix, anything else an exact name. */
function matchesAny(name: string, patterns: readonly string[]): string {
    const list = patterns.filter((x) => typeof x === "string");
    if (list.includes("*")) return "true";
    const parts: string[] = [];
    const exact = list.filter((x) => !x.endsWith("*"));
    const prefixes = list.filter((x) => x.endsWith("*")).map((x) => x.slice(0, -1));
    if (exact.length > 0) parts.push(`${name} in ${lit(exact)}`);
    if (prefixes.length > 0) parts.push(`${lit(prefixes)}.exists(pre, ${name}.startsWith(pre))`);
    return parts.length === 0 ? "false" : `(${parts.join(" || ")})`;
}

export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPForbiddenSysctls",
    template: "forbidden-sysctls",
    checks: (p, s) => {
        const sysctls = get(s.o, "spec.securityContext.sysctls", "[]");
        const out = [];
        if (Array.isArray(p.forbiddenSysctls)) {
            out.push({
                expression: `${sysctls}.all(x, !has(x.name) || !${matchesAny("x.name", p.forbiddenSysctls)})`,
                message: `sysctls ${JSON.stringify(p.forbiddenSysctls)} are forbidden`,
            });
        }
        if (Array.isArray(p.allowedSysctls)) {
            out.push({
                expression: `${sysctls}.all(x, !has(x.name) || ${matchesAny("x.name", p.allowedSysctls)})`,
                message: `only the sysctls ${JSON.stringify(p.allowedSysctls)} are allowed`,
            });
        }
        return out;
    },
};
