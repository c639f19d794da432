import type { Params } from "../../gatekeeper/templates/host-network-ports";
import { allContainers, everyContainer, get, present } from "../cel";
import type { AdmissionRule } from "../types";

/** hostNetwork only when the constraint allows it (exemptImages do not apply); hostPorts within min..max when given. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sPSPHostNetworkingPorts",
    template: "host-network-ports",
    checks: (p, s) => {
        const out = [];
        if (p.hostNetwork !== true) {
            out.push({ expression: `!(${present(s.o, "spec.hostNetwork")} && ${s.o}.spec.hostNetwork)`, message: "hostNetwork is not allowed" });
        }
        const bounds: string[] = [];
        if (typeof p.min === "number") bounds.push(`port.hostPort < ${p.min}`);
        if (typeof p.max === "number") bounds.push(`port.hostPort > ${p.max}`);
        if (bounds.length > 0) {
            out.push({
                expression: everyContainer(allContainers(s.o), p.exemptImages, (c) =>
                    `${get(c, "ports", "[]")}.all(port, !has(port.hostPort) || !(${bounds.join(" || ")}))`),
                message: `hostPorts must be within ${p.min ?? "-"}..${p.max ?? "-"}`,
            });
        }
        return out;
    },
};
