/** Section 2.4: the desired count is clamped to [minReplicas, maxReplicas], so the range must not be empty. */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";

export const rule = specRule({
    name: "hpa-replica-range",
    description: "A HorizontalPodAutoscaler's minReplicas (default 1) is at least 1 and at most its maxReplicas (section 2.4)",
    check(stack: StackView): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object: hpa } of stack.ofKind("HorizontalPodAutoscaler")) {
            const min = hpa.spec?.minReplicas ?? 1;
            const max = hpa.spec?.maxReplicas;
            if (typeof max !== "number" || typeof min !== "number") {
                findings.push({ urn, message: `${describe(hpa)} needs numeric minReplicas and maxReplicas, got ${JSON.stringify(min)} and ${JSON.stringify(max)}` });
            } else if (min < 1 || min > max) {
                findings.push({ urn, message: `${describe(hpa)} has minReplicas ${min} and maxReplicas ${max}; expected 1 <= minReplicas <= maxReplicas` });
            }
        }
        return findings;
    },
});
