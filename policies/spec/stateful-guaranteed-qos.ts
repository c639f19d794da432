/**
 * Section 2.1: Guaranteed pods (requests equal limits for cpu and memory) are killed last under
 * memory pressure (oom_score_adj -998). In prod the stateful data stores (StatefulSets) are
 * Guaranteed; a request left out defaults to the limit, as the API server does.
 */
import { parseBytesMillis, parseCpuMillis } from "../gatekeeper/engine/quantity";
import { specRule, type Finding } from "../pack/rule";
import { containersOf, describe, podTemplateOf, type StackView } from "../pack/stack";
import { tierSchema, type TierConfig } from "../pack/tier";

const PARSERS: Record<"cpu" | "memory", (v: unknown) => number | undefined> = { cpu: parseCpuMillis, memory: parseBytesMillis };

export const rule = specRule<TierConfig>({
    name: "stateful-guaranteed-qos",
    description: "In prod every container of a StatefulSet (stateful data store) is Guaranteed QoS: cpu and memory limits set and requests equal to them (section 2.1)",
    configSchema: { properties: { ...tierSchema } },
    check(stack: StackView, config): Finding[] {
        if (config.tier !== "prod") return [];
        const findings: Finding[] = [];
        for (const { urn, object } of stack.ofKind("StatefulSet", "apps")) {
            for (const { container, init } of containersOf(podTemplateOf(object))) {
                const label = `${describe(object)}: ${init ? "init container" : "container"} ${container.name}`;
                for (const resource of ["cpu", "memory"] as const) {
                    const limit = container.resources?.limits?.[resource];
                    const request = container.resources?.requests?.[resource] ?? limit;
                    if (limit === undefined) findings.push({ urn, message: `${label} has no ${resource} limit; Guaranteed QoS needs requests equal to limits` });
                    else if (PARSERS[resource](request) !== PARSERS[resource](limit)) findings.push({ urn, message: `${label} requests ${resource} ${request} but is limited to ${limit}; Guaranteed QoS needs them equal` });
                }
            }
        }
        return findings;
    },
});
