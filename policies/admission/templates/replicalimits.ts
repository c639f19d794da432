import type { Params } from "../../gatekeeper/templates/replicalimits";
import { present, unlessNameless } from "../cel";
import type { AdmissionRule } from "../types";

/** An object that sets spec.replicas keeps it within one of the ranges (an entry without both bounds allows nothing). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sReplicaLimits",
    template: "replicalimits",
    checks: (p, s) => {
        const ranges = (p.ranges ?? [])
            .filter((r) => typeof r?.min_replicas === "number" && typeof r?.max_replicas === "number")
            .map((r) => `(${s.o}.spec.replicas >= ${r.min_replicas} && ${s.o}.spec.replicas <= ${r.max_replicas})`);
        return [{
            expression: `!has(${s.o}.spec) || ` + unlessNameless(`${present(s.o, "spec.replicas")} && (${ranges.length > 0 ? ranges.join(" || ") : "false"})`),
            message: `spec.replicas must be within ${JSON.stringify(p.ranges ?? [])}`,
        }];
    },
};
