import type { IdRange, Params } from "../../gatekeeper/templates/fsgroup";
import { present } from "../cel";
import type { AdmissionRule } from "../types";

function inRanges(v: string, ranges: readonly IdRange[] | undefined): string {
    const alts = (ranges ?? [])
        .filter((r) => typeof r?.min === "number" && typeof r?.max === "number")
        .map((r) => `(${v} >= ${r.min} && ${v} <= ${r.max})`);
    return alts.length === 0 ? "false" : `(${alts.join(" || ")})`;
}

/** The pod's fsGroup under the rule; without a rule nothing is reported, as in the library. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPFSGroup",
    template: "fsgroup",
    checks: (p, s) => {
        // Without a rule the library reports nothing (its violation needs parameters.rule).
        if (p.rule !== "MustRunAs" && p.rule !== "MayRunAs") return [];
        const has = present(s.o, "spec.securityContext.fsGroup");
        const v = `${s.o}.spec.securityContext.fsGroup`;
        const ok = p.rule === "MustRunAs" ? `(${has} && ${inRanges(v, p.ranges)})` : p.rule === "MayRunAs" ? `(!${has} || ${inRanges(v, p.ranges)})` : "false";
        return [{ expression: `!has(${s.o}.spec) || ${ok}`, message: `the pod's fsGroup must be allowed by ${JSON.stringify(p)}` }];
    },
};
