/**
 * Section 8.2 names the node ports of the environment (GitOps server 30443, column store 30900
 * and a variant); a NodePort or LoadBalancer Service may only open node ports from the allowlist,
 * and must name them (an unset nodePort is a random one).
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";

export interface NodePortConfig {
    allowedNodePorts: number[];
}

export const rule = specRule<NodePortConfig>({
    name: "node-port-allowlist",
    description: "NodePort and LoadBalancer Services open only node ports from the allowlist, each set explicitly (section 8.2)",
    configSchema: {
        properties: {
            allowedNodePorts: { type: "array", items: { type: "integer", minimum: 30000, maximum: 32767 }, default: [], description: "the node ports Services may open" },
        },
    },
    check(stack: StackView, config): Finding[] {
        const allowed = new Set(config.allowedNodePorts);
        const findings: Finding[] = [];
        for (const { urn, object: svc } of stack.ofKind("Service", "")) {
            if (svc.spec?.type !== "NodePort" && svc.spec?.type !== "LoadBalancer") continue;
            for (const port of svc.spec?.ports ?? []) {
                const label = `${describe(svc)} port ${port.name ?? port.port}`;
                if (port.nodePort === undefined) findings.push({ urn, message: `${label} gets a random node port; set nodePort to one of the allowlist (${[...allowed].join(", ") || "empty"})` });
                else if (!allowed.has(port.nodePort)) findings.push({ urn, message: `${label} opens node port ${port.nodePort}, which is not in the allowlist (${[...allowed].join(", ") || "empty"})` });
            }
        }
        return findings;
    },
});
