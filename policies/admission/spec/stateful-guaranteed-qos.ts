import { get, lit } from "../cel";
import { BYTES_SYNTAX, CPU_SYNTAX } from "../resources";
import type { SpecAdmissionRule } from "./types";

/**
 * In prod every container and init container of a StatefulSet has cpu and memory limits and
 * requests equal to them (a request left out counts as the limit, as the API server defaults it).
 * Values compare as the pack does: two values it cannot parse are equal, one it cannot parse is not.
 */
export const admission: SpecAdmissionRule<{ tier: string }> = {
    name: "stateful-guaranteed-qos",
    resources: [{ apiGroups: ["apps"], resources: ["statefulsets"], kinds: ["StatefulSet"] }],
    checks: (c) => {
        if (c.tier !== "prod") return [];
        const containers = `(${get("object", "spec.template.spec.containers", "[]")} + ${get("object", "spec.template.spec.initContainers", "[]")})`;
        const equal = (resource: string, syntax: string) => {
            const limits = get("x", "resources.limits", "{}");
            const requests = get("x", "resources.requests", "{}");
            const lim = `string(${limits}[${lit(resource)}])`;
            const req = `(${lit(resource)} in ${requests} ? string(${requests}[${lit(resource)}]) : ${lim})`;
            const ok = (v: string) => `${v}.matches(${lit(syntax)})`;
            return `(${lit(resource)} in ${limits} && ((!${ok(req)} && !${ok(lim)}) || (${ok(req)} && ${ok(lim)} && quantity(${req}).compareTo(quantity(${lim})) == 0)))`;
        };
        return [{
            expression: `${containers}.all(x, ${equal("cpu", CPU_SYNTAX)} && ${equal("memory", BYTES_SYNTAX)})`,
            message: "in prod every StatefulSet container is Guaranteed QoS: cpu and memory limits set and requests equal to them (section 2.1)",
        }];
    },
};
