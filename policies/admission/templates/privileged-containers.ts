import type { Params } from "../../gatekeeper/templates/privileged-containers";
import { allContainers, everyContainer, present, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPPrivilegedContainer",
    template: "privileged-containers",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => unlessAbsent(c, ["name"], `!(${present(c, "securityContext.privileged")} && ${c}.securityContext.privileged)`)),
        message: "privileged containers are not allowed",
    }],
};
