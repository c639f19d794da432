/**
 * Section 2.4 rule 5: resource utilization is relative to the pod request, so a horizontal
 * autoscaler with a Utilization metric needs that request on every container of its target.
 */
import { specRule, type Finding } from "../pack/rule";
import { containersOf, describe, podTemplateOf, type StackView } from "../pack/stack";

export const rule = specRule({
    name: "hpa-utilization-needs-requests",
    description: "A HorizontalPodAutoscaler with a Utilization metric targets a workload of the stack whose every container requests that resource (section 2.4 rule 5)",
    check(stack: StackView): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object: hpa } of stack.ofKind("HorizontalPodAutoscaler")) {
            const metrics: any[] = Array.isArray(hpa.spec?.metrics) ? hpa.spec.metrics : [];
            const utilization = metrics
                .map((m) => (m?.type === "Resource" ? { resource: m.resource, container: undefined } : m?.type === "ContainerResource" ? { resource: m.containerResource, container: m.containerResource?.container } : undefined))
                .filter((m): m is { resource: any; container: string | undefined } => m?.resource?.target?.type === "Utilization");
            if (utilization.length === 0) continue;
            const ref = hpa.spec?.scaleTargetRef ?? {};
            const target = stack.find(ref.kind, stack.namespaceOf(hpa), ref.name);
            if (!target) {
                findings.push({ urn, message: `${describe(hpa)} scales ${ref.kind}/${ref.name} on utilization, which is not an object of the stack, so its requests cannot be checked` });
                continue;
            }
            const containers = containersOf(podTemplateOf(target.object)).filter((c) => !c.init);
            for (const metric of utilization) {
                const resource = String(metric.resource.name);
                for (const { container } of containers) {
                    if (metric.container !== undefined && container.name !== metric.container) continue;
                    if (container.resources?.requests?.[resource] === undefined) {
                        findings.push({ urn, message: `${describe(hpa)} scales on ${resource} utilization, but container ${container.name} of ${describe(target.object)} has no ${resource} request (utilization is a percentage of the request)` });
                    }
                }
            }
        }
        return findings;
    },
});
