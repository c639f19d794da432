import { get } from "../cel";
import type { AdmissionRule } from "../types";

/** No Ingress rule with an empty (or omitted) host or a host containing "*". */
export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sBlockWildcardIngress",
    template: "block-wildcard-ingress",
    checks: (_p, s) => [{
        expression: `${s.kind} != "Ingress" || ${get(s.o, "spec.rules", "[]")}.all(r, has(r.host) && r.host != "" && !r.host.contains("*"))`,
        message: "Ingress hosts may not be empty or contain a wildcard",
    }],
};
