import type { Params } from "../../gatekeeper/templates/read-only-root-filesystem";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPReadOnlyRootFilesystem",
    template: "read-only-root-filesystem",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
            `${present(c, "securityContext.readOnlyRootFilesystem")} && ${c}.securityContext.readOnlyRootFilesystem == true`),
        message: "every container must set securityContext.readOnlyRootFilesystem: true",
    }],
};
