import type { Params } from "../../gatekeeper/templates/containerlimits";
import { containersAndInit, everyContainer } from "../cel";
import { sectionOk, type ResourceLimit } from "../resources";
import type { AdmissionRule } from "../types";

/** cpu "-1" turns the CPU check off, as in the template. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sContainerLimits",
    template: "containerlimits",
    checks: (p, s) => {
        const limits: ResourceLimit[] = [];
        // `input.parameters.cpu != "-1"` is undefined without cpu: no CPU rule then (issue 21).
        if (p.cpu !== undefined && p.cpu !== "-1") limits.push({ resource: "cpu", max: p.cpu });
        limits.push({ resource: "memory", max: p.memory });
        return [{
            expression: everyContainer(containersAndInit(s.o), p.exemptImages, (c) => sectionOk(c, "limits", limits)),
            message: `every container must set cpu and memory limits no higher than cpu ${p.cpu ?? "-"}, memory ${p.memory ?? "-"}`,
        }];
    },
};
