import type { Params } from "../../gatekeeper/templates/proc-mount";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

/** Unless the constraint allows Unmasked, a container's procMount is unset or Default (case-insensitive). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPProcMount",
    template: "proc-mount",
    checks: (p, s) => {
        if (typeof p.procMount === "string" && p.procMount.toLowerCase() === "unmasked") return [];
        return [{
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                `!${present(c, "securityContext.procMount")} || ${c}.securityContext.procMount.lowerAscii() == "default"`),
            message: "only the Default procMount is allowed",
        }];
    },
};
