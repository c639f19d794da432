import type { Params } from "../../gatekeeper/templates/allowedreposv2";
import { allContainers, exempt, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** Every container image equals an allowed image, or starts with an entry ending in "*". */
export const admission: AdmissionRule<Params> = {
    kind: "K8sAllowedReposv2",
    template: "allowedreposv2",
    // Without allowedImages the Rego's message is undefined: no violation, so no check (issue 21).
    checks: (p, s) => p.allowedImages === undefined ? [] : [{
        expression: `${allContainers(s.o)}.all(c, ${unlessAbsent("c", ["name", "image"], exempt("c", p.allowedImages))})`,
        message: `every container image must be one of ${JSON.stringify(p.allowedImages ?? [])}`,
    }],
};
