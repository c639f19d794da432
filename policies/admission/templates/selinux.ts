import type { Params, SELinuxOptions } from "../../gatekeeper/templates/selinux";
import { allContainers, everyContainer, lit, present, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

const FIELDS = ["level", "role", "type", "user"] as const;

/** seLinuxOptions (pod and container) match one allowed entry on every field they set. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPSELinuxV2",
    template: "selinux",
    checks: (p, s) => {
        if (!Array.isArray(p.allowedSELinuxOptions)) return [];
        const entries = p.allowedSELinuxOptions.filter((e): e is SELinuxOptions => !!e && typeof e === "object");
        const allowed = (o: string) => entries.length === 0 ? "false"
            : `(${entries.map((e) => `(${FIELDS.map((f) => `(!has(${o}.${f}) || ${o}.${f} == ${e[f] === undefined ? "null" : lit(e[f])})`).join(" && ")})`).join(" || ")})`;
        return [
            {
                expression: `!${present(s.o, "spec.securityContext.seLinuxOptions")} || ${allowed(`${s.o}.spec.securityContext.seLinuxOptions`)}`,
                message: `the pod's seLinuxOptions must match one of ${JSON.stringify(entries)}`,
            },
            {
                expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                    unlessAbsent(c, ["name"], `!${present(c, "securityContext.seLinuxOptions")} || ${allowed(`${c}.securityContext.seLinuxOptions`)}`)),
                message: `containers' seLinuxOptions must match one of ${JSON.stringify(entries)}`,
            },
        ];
    },
};
