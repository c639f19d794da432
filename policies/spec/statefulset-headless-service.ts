/**
 * Section 2.2 and 2.3: a StatefulSet's serviceName is a headless Service (clusterIP None) that
 * gives its pods their stable DNS names <statefulset>-<ordinal>.<service>.<namespace>.svc.
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, selects, type StackView } from "../pack/stack";

export const rule = specRule({
    name: "statefulset-headless-service",
    description: "A StatefulSet's spec.serviceName names a headless Service (clusterIP None) of the stack in its namespace that selects its pods (sections 2.2, 2.3)",
    check(stack: StackView): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object: sts } of stack.ofKind("StatefulSet", "apps")) {
            const serviceName = sts.spec?.serviceName;
            const namespace = stack.namespaceOf(sts);
            if (!serviceName) {
                findings.push({ urn, message: `${describe(sts)} has no spec.serviceName; it needs a headless Service for stable pod DNS names` });
                continue;
            }
            const service = stack.find("Service", namespace, serviceName)?.object;
            if (!service) {
                findings.push({ urn, message: `${describe(sts)} names Service ${namespace}/${serviceName}, which the stack does not create` });
            } else if (service.spec?.clusterIP !== "None") {
                findings.push({ urn, message: `${describe(sts)} names Service ${namespace}/${serviceName}, which is not headless (spec.clusterIP must be None, got ${JSON.stringify(service.spec?.clusterIP ?? "unset")})` });
            } else if (!selects(service.spec?.selector, sts.spec?.template?.metadata?.labels)) {
                findings.push({ urn, message: `${describe(sts)}: its headless Service ${namespace}/${serviceName} does not select its pods (selector ${JSON.stringify(service.spec?.selector ?? {})})` });
            }
        }
        return findings;
    },
});
