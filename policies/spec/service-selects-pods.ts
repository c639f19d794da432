/**
 * Section 2.3: a Service balances across the ready pods its selector matches; a selector that
 * matches no pod of the stack (or a named targetPort no selected container declares) is a Service
 * without endpoints.
 */
import { specRule, type Finding } from "../pack/rule";
import { containersOf, describe, podOwners, podTemplateOf, selects, type PodTemplate, type StackView } from "../pack/stack";

export const rule = specRule({
    name: "service-selects-pods",
    description: "A Service with a selector selects pods of a workload of the stack in its namespace, and each named targetPort is a port name of a selected container (section 2.3)",
    check(stack: StackView): Finding[] {
        const findings: Finding[] = [];
        const templatesIn = new Map<string, PodTemplate[]>();
        for (const o of podOwners(stack)) {
            const ns = stack.namespaceOf(o.object);
            templatesIn.set(ns, [...(templatesIn.get(ns) ?? []), podTemplateOf(o.object) ?? {}]);
        }
        for (const { urn, object: svc } of stack.ofKind("Service", "")) {
            const selector = svc.spec?.selector;
            if (svc.spec?.type === "ExternalName" || !selector || Object.keys(selector).length === 0) continue;
            const namespace = stack.namespaceOf(svc);
            const selected = (templatesIn.get(namespace) ?? []).filter((t) => selects(selector, t.metadata?.labels));
            if (selected.length === 0) {
                findings.push({ urn, message: `${describe(svc)} selects ${JSON.stringify(selector)}, which matches no pod of the stack in namespace ${namespace}` });
                continue;
            }
            const portNames = new Set(selected.flatMap((t) => containersOf(t).flatMap((c) => (c.container.ports ?? []).map((p: any) => p.name))));
            for (const port of svc.spec?.ports ?? []) {
                if (typeof port.targetPort === "string" && !portNames.has(port.targetPort)) {
                    findings.push({ urn, message: `${describe(svc)} port ${port.name ?? port.port} targets port name ${port.targetPort}, which no selected container declares` });
                }
            }
        }
        return findings;
    },
});
