import type { Params } from "../../gatekeeper/templates/flexvolume-drivers";
import { get, lit } from "../cel";
import type { AdmissionRule } from "../types";

/** flexVolume volumes only with an allowed driver (without allowedFlexVolumes nothing is checked, as in the template). */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPFlexVolumes",
    template: "flexvolume-drivers",
    checks: (p, s) => {
        if (!Array.isArray(p.allowedFlexVolumes)) return [];
        const drivers = p.allowedFlexVolumes.map((e) => e?.driver).filter((d): d is string => typeof d === "string");
        return [{
            expression: `${get(s.o, "spec.volumes", "[]")}.all(v, !has(v.flexVolume) || (has(v.flexVolume.driver) && v.flexVolume.driver in ${lit(drivers)}))`,
            message: `flexVolume drivers must be among ${JSON.stringify(drivers)}`,
        }];
    },
};
