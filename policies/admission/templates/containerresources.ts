import type { Params } from "../../gatekeeper/templates/containerresources";
import { containersAndInit, everyContainer, get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** Every listed resource is set in the container's limits and requests. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sRequiredResources",
    template: "containerresources",
    checks: (p, s) => (["limits", "requests"] as const)
        .filter((section) => (p[section] ?? []).length > 0)
        .map((section) => ({
            expression: everyContainer(containersAndInit(s.o), p.exemptImages, (c) => `${lit(p[section])}.all(r, r in ${get(c, `resources.${section}`, "{}")})`),
            message: `every container must set ${section} for ${JSON.stringify(p[section])}`,
        })),
};
