import type { Params } from "../../gatekeeper/templates/containerrequests";
import { containersAndInit, everyContainer } from "../cel";
import { sectionOk } from "../resources";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Params> = {
    kind: "K8sContainerRequests",
    template: "containerrequests",
    checks: (p, s) => [{
        expression: everyContainer(containersAndInit(s.o), p.exemptImages, (c) =>
            sectionOk(c, "requests", [{ resource: "cpu", max: p.cpu }, { resource: "memory", max: p.memory }])),
        message: `every container must set cpu and memory requests no higher than cpu ${p.cpu ?? "-"}, memory ${p.memory ?? "-"}`,
    }],
};
