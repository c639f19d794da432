import type { Params } from "../../gatekeeper/templates/disallowedrepos";
import { allContainers, get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** No container image starts with a disallowed repository (no exemptImages in this template). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sDisallowedRepos",
    template: "disallowedrepos",
    checks: (p, s) => [{
        expression: `${allContainers(s.o)}.all(c, !${lit(p.repos ?? [])}.exists(r, ${get("c", "image", '""')}.startsWith(r)))`,
        message: `no container image may come from the disallowed repositories ${JSON.stringify(p.repos ?? [])}`,
    }],
};
