import { present } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sBlockNodePort",
    template: "block-nodeport-services",
    checks: (_p, s) => [{
        expression: `${s.kind} != "Service" || !(${present(s.o, "spec.type")} && ${s.o}.spec.type == "NodePort")`,
        message: "Services of type NodePort are not allowed",
    }],
};
