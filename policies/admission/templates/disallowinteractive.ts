import type { Params } from "../../gatekeeper/templates/disallowinteractive";
import { allContainers, everyContainer, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

/** No container sets stdin or tty. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sDisallowInteractiveTTY",
    template: "disallowinteractive",
    checks: (p, s) => [{
        expression: everyContainer(allContainers(s.o), p.exemptImages, (c) => unlessAbsent(c, ["name", "image"], `!(has(${c}.stdin) && ${c}.stdin) && !(has(${c}.tty) && ${c}.tty)`)),
        message: "containers may not use stdin or tty",
    }],
};
