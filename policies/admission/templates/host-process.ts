import type { Params } from "../../gatekeeper/templates/host-process";
import { allContainers, everyContainer, present } from "../cel";
import type { AdmissionRule } from "../types";

/** No Windows HostProcess, at pod level (exemptImages do not apply) or per container. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPHostProcess",
    template: "host-process",
    checks: (p, s) => [
        {
            expression: `!(${present(s.o, "spec.securityContext.windowsOptions.hostProcess")} && ${s.o}.spec.securityContext.windowsOptions.hostProcess == true)`,
            message: "HostProcess is not allowed at pod level",
        },
        {
            expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                `!(${present(c, "securityContext.windowsOptions.hostProcess")} && ${c}.securityContext.windowsOptions.hostProcess == true)`),
            message: "HostProcess containers are not allowed",
        },
    ],
};
