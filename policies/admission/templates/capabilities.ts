import type { Params } from "../../gatekeeper/templates/capabilities";
import { allContainers, everyContainer, get, lit, unlessAbsent } from "../cel";
import type { AdmissionRule } from "../types";

const lower = (list: readonly string[] | undefined) => [...new Set((list ?? []).filter((x) => typeof x === "string").map((x) => x.toLowerCase()))];

/** Added capabilities within allowedCapabilities ("*" allows any); every requiredDropCapabilities dropped ("ALL" covers all). Case-insensitive. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPCapabilities",
    template: "capabilities",
    checks: (p, s) => {
        const out = [];
        const allowed = lower(p.allowedCapabilities);
        if (!allowed.includes("*")) {
            out.push({
                expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                    unlessAbsent(c, ["name"], `${get(c, "securityContext.capabilities.add", "[]")}.all(x, x.lowerAscii() in ${lit(allowed)})`)),
                message: `containers may only add the capabilities ${JSON.stringify(p.allowedCapabilities ?? [])}`,
            });
        }
        const mustDrop = lower(p.requiredDropCapabilities);
        if (mustDrop.length > 0) {
            const dropped = `${get("c", "securityContext.capabilities.drop", "[]")}.map(d, d.lowerAscii())`;
            out.push({
                expression: everyContainer(allContainers(s.o), p.exemptImages, () =>
                    unlessAbsent("c", ["name"], `"all" in ${dropped} || ${lit(mustDrop)}.all(r, r in ${dropped})`)),
                message: `containers must drop ${JSON.stringify(p.requiredDropCapabilities)} or "ALL"`,
            });
        }
        return out;
    },
};
