import type { Params } from "../../gatekeeper/templates/allow-privilege-escalation";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

/** Only an explicit allowPrivilegeEscalation: false passes (unset means allowed by Kubernetes). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPAllowPrivilegeEscalationContainer",
    template: "allow-privilege-escalation",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
            `${present(c, "securityContext.allowPrivilegeEscalation")} && ${c}.securityContext.allowPrivilegeEscalation == false`),
        message: "every container must set securityContext.allowPrivilegeEscalation: false",
    }],
};
