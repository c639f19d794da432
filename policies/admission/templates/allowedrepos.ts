import type { Params } from "../../gatekeeper/templates/allowedrepos";
import { allContainers, lit, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** Every container's image starts with one of the allowed repositories (no exemptImages in this template). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sAllowedRepos",
    template: "allowedrepos",
    checks: (p, s) => [{
        expression: `${allContainers(s.o)}.all(c, ${unlessAbsent("c", ["name", "image"], `${lit(p.repos ?? [])}.exists(r, c.image.startsWith(r))`)})`,
        message: `every container image must come from one of the allowed repositories ${JSON.stringify(p.repos ?? [])}`,
    }],
};
