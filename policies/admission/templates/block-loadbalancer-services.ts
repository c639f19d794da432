import { present } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sBlockLoadBalancer",
    template: "block-loadbalancer-services",
    checks: (_p, s) => [{
        expression: `${s.kind} != "Service" || !(${present(s.o, "spec.type")} && ${s.o}.spec.type == "LoadBalancer")`,
        message: "Services of type LoadBalancer are not allowed",
    }],
};
