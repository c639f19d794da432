import { get, lit, present } from "../cel";
import type { SpecAdmissionRule } from "./types";

/**
 * NodePort and LoadBalancer Services open only allowlisted node ports. At admission the API server
 * has already allocated a node port the Service leaves out, so "left out" shows as a port outside
 * the allowlist (refused all the same, unless the random port happens to be allowlisted).
 */
export const admission: SpecAdmissionRule<{ allowedNodePorts: number[] }> = {
    name: "node-port-allowlist",
    resources: [{ apiGroups: [""], resources: ["services"], kinds: ["Service"] }],
    checks: (c) => [{
        expression: `!(${present("object", "spec.type")} && object.spec.type in ["NodePort", "LoadBalancer"]) || ` +
            `${get("object", "spec.ports", "[]")}.all(p, has(p.nodePort) && p.nodePort in ${lit(c.allowedNodePorts ?? [])})`,
        message: `NodePort and LoadBalancer Services may only open the node ports ${JSON.stringify(c.allowedNodePorts ?? [])}, each set explicitly (section 8.2)`,
    }],
};
