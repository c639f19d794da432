import type { Params } from "../../gatekeeper/templates/requiredprobes";
import { regularContainers, unlessNameless } from "../cel";
import type { AdmissionRule } from "../types";

const IDENTIFIER = /^[A-Za-z_][A-Za-z0-9_]*$/;

function field(name: string, what: string): string {
    if (!IDENTIFIER.test(name)) throw new Error(`K8sRequiredProbes: ${what} ${JSON.stringify(name)} is not a field name`);
    return name;
}

/** Every regular container defines each listed probe with one of the accepted probe types. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sRequiredProbes",
    template: "requiredprobes",
    checks: (p, s) => (p.probes ?? []).map((probe) => {
        const pr = field(probe, "probe");
        const types = (p.probeTypes ?? []).map((t) => `has(c.${pr}.${field(t, "probe type")})`);
        return {
            expression: unlessNameless(`${regularContainers(s.o)}.all(c, has(c.${pr}) && (${types.length > 0 ? types.join(" || ") : "false"}))`),
            message: `every container must define a ${probe} (${(p.probeTypes ?? []).join(", ")})`,
        };
    }),
};
