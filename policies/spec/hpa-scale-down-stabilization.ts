/**
 * Section 2.4 rule 3 and 8.1: scale-down applies a stabilization window (5m0s in the example);
 * in prod no autoscaler may shorten it below that, so load dips do not flap replicas.
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";
import { tierSchema, type TierConfig } from "../pack/tier";

/** Kubernetes' default scale-down stabilization window when behavior leaves it out. */
const KUBERNETES_DEFAULT_SECONDS = 300;

export const rule = specRule<TierConfig & { minimumSeconds: number }>({
    name: "hpa-scale-down-stabilization",
    description: "In prod a HorizontalPodAutoscaler's scale-down stabilization window is at least 300 s (section 2.4 rule 3, section 8.1)",
    configSchema: {
        properties: {
            ...tierSchema,
            minimumSeconds: { type: "integer", minimum: 0, default: 300, description: "smallest allowed behavior.scaleDown.stabilizationWindowSeconds in prod" },
        },
    },
    check(stack: StackView, config): Finding[] {
        if (config.tier !== "prod") return [];
        const findings: Finding[] = [];
        for (const { urn, object: hpa } of stack.ofKind("HorizontalPodAutoscaler")) {
            const window = hpa.spec?.behavior?.scaleDown?.stabilizationWindowSeconds ?? KUBERNETES_DEFAULT_SECONDS;
            if (typeof window !== "number" || window < config.minimumSeconds) {
                findings.push({ urn, message: `${describe(hpa)} has a scale-down stabilization window of ${window} s; prod needs at least ${config.minimumSeconds} s` });
            }
        }
        return findings;
    },
});
