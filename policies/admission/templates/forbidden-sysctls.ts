import type { Params } from "../../gatekeeper/templates/forbidden-sysctls";
import { get, lit, unlessNameless } from "../cel";
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

const has_ = (x: string) => `has(${x}.name)`;
/** A name that is not a string matches only "*" (the library's patterns on name: null). */
const nullMatches = (patterns: readonly string[]) => patterns.includes("*");

/**
 * An entry without a name is judged as the library judges name: null (the API server decodes
 * null as absent; either way its validation refuses an empty sysctl name).
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPForbiddenSysctls",
    template: "forbidden-sysctls",
    checks: (p, s) => {
        const sysctls = get(s.o, "spec.securityContext.sysctls", "[]");
        const out = [];
        if (Array.isArray(p.forbiddenSysctls)) {
            out.push({
                expression: unlessNameless(`${sysctls}.all(x, ${has_("x")} ? !${matchesAny("x.name", p.forbiddenSysctls)} : ${nullMatches(p.forbiddenSysctls) ? "false" : "true"})`),
                message: `sysctls ${JSON.stringify(p.forbiddenSysctls)} are forbidden`,
            });
        }
        if (Array.isArray(p.allowedSysctls)) {
            out.push({
                expression: unlessNameless(`${sysctls}.all(x, ${has_("x")} ? ${matchesAny("x.name", p.allowedSysctls)} : ${nullMatches(p.allowedSysctls) ? "true" : "false"})`),
                message: `only the sysctls ${JSON.stringify(p.allowedSysctls)} are allowed`,
            });
        }
        return out;
    },
};
