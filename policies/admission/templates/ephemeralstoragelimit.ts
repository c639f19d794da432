import type { Params } from "../../gatekeeper/templates/ephemeralstoragelimit";
import { containersAndInit, everyContainer } from "../cel";
import { sectionOk } from "../resources";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Params> = {
    kind: "K8sContainerEphemeralStorageLimit",
    template: "ephemeralstoragelimit",
    checks: (p, s) => [{
        expression: everyContainer(containersAndInit(s.o), p.exemptImages, (c) =>
            sectionOk(c, "limits", [{ resource: "ephemeral-storage", max: p["ephemeral-storage"] }])),
        message: `every container must set an ephemeral-storage limit no higher than ${p["ephemeral-storage"] ?? "-"}`,
    }],
};
