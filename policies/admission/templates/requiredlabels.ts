import type { Params } from "../../gatekeeper/templates/requiredlabels";
import { get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** Every listed label is present; a non-empty allowedRegex must match (RE2 search, as Go's regexp.MatchString). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sRequiredLabels",
    template: "requiredlabels",
    checks: (p, s) => {
        const labels = get(s.o, "metadata.labels", "{}");
        const entries = (p.labels ?? []).filter((e) => typeof e?.key === "string");
        const keys = [...new Set(entries.map((e) => e.key as string))];
        const out = [];
        if (keys.length > 0) {
            out.push({ expression: `${lit(keys)}.all(k, k in ${labels})`, message: p.message ?? `you must provide labels: ${JSON.stringify(keys)}` });
        }
        for (const e of entries) {
            if (!e.allowedRegex) continue;
            out.push({
                expression: `!(${lit(e.key)} in ${labels}) || ${labels}[${lit(e.key)}].matches(${lit(e.allowedRegex)})`,
                message: p.message ?? `Label <${e.key}> does not satisfy allowed regex: ${e.allowedRegex}`,
            });
        }
        return out;
    },
};
