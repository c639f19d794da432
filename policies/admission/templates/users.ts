import type { IdRange, Params } from "../../gatekeeper/templates/users";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule, CelCheck } from "../types";

function inRanges(v: string, ranges: readonly IdRange[] | undefined): string {
    const alts = (ranges ?? [])
        .filter((r) => typeof r?.min === "number" && typeof r?.max === "number")
        .map((r) => `(${v} >= ${r.min} && ${v} <= ${r.max})`);
    return alts.length === 0 ? "false" : `(${alts.join(" || ")})`;
}

/** The container's own securityContext field, else the pod's: [is it set, its value]. */
function effective(s: string, c: string, field: string): [string, string] {
    const own = present(c, `securityContext.${field}`);
    const pod = present(s, `spec.securityContext.${field}`);
    return [`(${own} || ${pod})`, `(${own} ? ${c}.securityContext.${field} : ${s}.spec.securityContext.${field})`];
}

/**
 * runAsUser, runAsGroup, supplementalGroups and fsGroup rules as the template judges them per
 * container: the value in force (container, else pod) within the rule; MustRunAs needs a value;
 * MustRunAsNonRoot needs runAsUser != 0 or runAsNonRoot.
 */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPAllowedUsers",
    template: "users",
    checks: (p, s) => {
        const out: CelCheck[] = [];
        const containers = allContainers(s.o);
        const user = p.runAsUser;
        if (user && typeof user === "object" && user.rule !== undefined && user.rule !== "RunAsAny") {
            out.push({
                expression: everyContainer(containers, p.exemptImages, (c) => {
                    const [has, val] = effective(s.o, c, "runAsUser");
                    if (user.rule === "MustRunAsNonRoot") {
                        const [hasNonRoot, nonRoot] = effective(s.o, c, "runAsNonRoot");
                        return `(${has} ? ${val} != 0 : (${hasNonRoot} && ${nonRoot} == true))`;
                    }
                    if (user.rule === "MustRunAs") return `(${has} && ${inRanges(val, user.ranges)})`;
                    return "false";
                }),
                message: `containers must run as a user allowed by ${JSON.stringify(user)}`,
            });
        }
        for (const field of ["runAsGroup", "supplementalGroups", "fsGroup"] as const) {
            const rule = p[field];
            if (!rule || typeof rule !== "object" || rule.rule === undefined) continue;
            const accept = (v: string) =>
                rule.rule === "RunAsAny" ? "true" : rule.rule === "MayRunAs" || rule.rule === "MustRunAs" ? inRanges(v, rule.ranges) : "false";
            out.push({
                expression: everyContainer(containers, p.exemptImages, (c) => {
                    const [has, val] = effective(s.o, c, field);
                    const valueOk = rule.ranges === undefined ? "true" : field === "supplementalGroups" ? `${val}.all(g, ${accept("g")})` : accept(val);
                    return `(${has} ? ${valueOk} : ${rule.rule === "MustRunAs" ? "false" : "true"})`;
                }),
                message: `containers must run with a ${field} allowed by ${JSON.stringify(rule)}`,
            });
        }
        return out;
    },
};
