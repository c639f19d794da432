import type { Params } from "../../gatekeeper/templates/externalip";
import { get, lit } from "../cel";
import type { AdmissionRule } from "../types";

export const admission: AdmissionRule<Params> = {
    kind: "K8sExternalIPs",
    template: "externalip",
    checks: (p, s) => [{
        expression: `${s.kind} != "Service" || ${s.group} != "" || ${get(s.o, "spec.externalIPs", "[]")}.all(ip, ip in ${lit(p.allowedIPs ?? [])})`,
        message: `Service externalIPs must be among ${JSON.stringify(p.allowedIPs ?? [])}`,
    }],
};
