import type { TemplateRule } from "../types";
import { allContainers, isSet, violations, type Container, rego } from "./lib/pod";

export interface Params {
    probes?: string[];
    probeTypes?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sRequiredProbes",
    template: "requiredprobes",
    category: "general",
    description: "Requires Pods to have readiness and/or liveness probes.",
    parameterSchema: {
        "type": "object",
        "properties": {
            "probes": {
                "description": "A list of probes that are required (ex: `readinessProbe`)",
                "type": "array",
                "items": {
                    "type": "string"
                }
            },
            "probeTypes": {
                "description": "The probe must define a field listed in `probeType` in order to satisfy the constraint (ex. `tcpSocket` satisfies `['tcpSocket', 'exec']`)",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const probes = parameters.probes ?? [];
        const probeTypes = parameters.probeTypes ?? [];
        const messages: (string | undefined)[] = [];
        // Only regular containers: init and ephemeral containers cannot have readiness/liveness probes.
        for (const { container, kind } of allContainers(review.object)) {
            if (kind !== "container") continue;
            for (const probe of probes) {
                if (isProbeDefined(container, probe, probeTypes)) continue;
                messages.push(rego`Container <${container.name}> in your <${review.kind.kind}> <${review.object.metadata?.name}> has no <${probe}>`);
            }
        }
        return violations(messages);
    },
};

/** The probe is set and defines at least one of the accepted probe types (tcpSocket, httpGet...). */
function isProbeDefined(container: Container, probe: string, probeTypes: readonly string[]): boolean {
    const value = container[probe];
    if (!isSet(value) || value === null || typeof value !== "object") return false;
    return probeTypes.some((type) => isSet(value[type]));
}
