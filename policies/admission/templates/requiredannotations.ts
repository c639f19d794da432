import type { Params } from "../../gatekeeper/templates/requiredannotations";
import { get, lit } from "../cel";
import type { AdmissionRule, CelCheck } from "../types";

/** Every listed annotation is present; a non-empty allowedRegex must match (RE2 search). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sRequiredAnnotations",
    template: "requiredannotations",
    checks: (p, s) => {
        const annotations = get(s.o, "metadata.annotations", "{}");
        const entries = (p.annotations ?? []).filter((e) => typeof e?.key === "string");
        const keys = [...new Set(entries.map((e) => e.key as string))];
        const out: CelCheck[] = [];
        if (keys.length > 0) out.push({ expression: `${lit(keys)}.all(k, k in ${annotations})`, message: p.message ?? `you must provide annotation(s): ${JSON.stringify(keys)}` });
        for (const e of entries) {
            if (!e.allowedRegex) continue;
            out.push({
                expression: `!(${lit(e.key)} in ${annotations}) || ${annotations}[${lit(e.key)}].matches(${lit(e.allowedRegex)})`,
                message: p.message ?? `Annotation <${e.key}> does not satisfy allowed regex: ${e.allowedRegex}`,
            });
        }
        return out;
    },
};
