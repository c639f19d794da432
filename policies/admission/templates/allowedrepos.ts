import type { Params } from "../../gatekeeper/templates/allowedrepos";
import { allContainers, lit, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** Every container's image starts with one of the allowed repositories (no exemptImages in this template). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sAllowedRepos",
    template: "allowedrepos",
    // Without repos the Rego's message is undefined: no violation, so no check (issue 21).
    checks: (p, s) => p.repos === undefined ? [] : [{
        expression: `${allContainers(s.o)}.all(c, ${unlessAbsent("c", ["name", "image"], `${lit(p.repos ?? [])}.exists(r, c.image.startsWith(r))`)})`,
        message: `every container image must come from one of the allowed repositories ${JSON.stringify(p.repos ?? [])}`,
    }],
};
