/**
 * Sections 2.1 and 2.5: without a policy pods communicate freely, and without limits a container
 * runs BestEffort; so every namespace the stack creates starts from a default-deny NetworkPolicy
 * (empty podSelector, Ingress and Egress, no rule) and a LimitRange with container defaults.
 */
import { specRule, type Finding } from "../pack/rule";
import type { K8sObject } from "../gatekeeper/types";
import { describe, type StackView } from "../pack/stack";

export interface GuardrailConfig {
    excludedNamespaces: string[];
}

function isDefaultDeny(np: K8sObject): boolean {
    const selector = np.spec?.podSelector ?? {};
    const empty = Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0;
    const types: string[] = np.spec?.policyTypes ?? [];
    return empty && types.includes("Ingress") && types.includes("Egress") && (np.spec?.ingress ?? []).length === 0 && (np.spec?.egress ?? []).length === 0;
}

function hasContainerDefaults(lr: K8sObject): boolean {
    return (lr.spec?.limits ?? []).some((l: any) => l?.type === "Container" && l.default?.memory !== undefined && l.defaultRequest?.memory !== undefined);
}

export const rule = specRule<GuardrailConfig>({
    name: "namespace-guardrails",
    description: "Every Namespace the stack creates has a default-deny NetworkPolicy (empty podSelector, Ingress and Egress, no rules) and a LimitRange with Container default and defaultRequest memory (sections 2.1, 2.5)",
    configSchema: {
        properties: {
            excludedNamespaces: { type: "array", items: { type: "string" }, default: [], description: "namespaces the stack creates that are exempt (none by default)" },
        },
    },
    check(stack: StackView, config): Finding[] {
        const findings: Finding[] = [];
        const excluded = new Set(config.excludedNamespaces);
        const namespacesWith = (kind: string, group: string, ok: (o: K8sObject) => boolean) =>
            new Set(stack.ofKind(kind, group).filter((o) => ok(o.object)).map((o) => stack.namespaceOf(o.object)));
        const denied = namespacesWith("NetworkPolicy", "networking.k8s.io", isDefaultDeny);
        const limited = namespacesWith("LimitRange", "", hasContainerDefaults);
        for (const { urn, object: ns } of stack.ofKind("Namespace", "")) {
            const name = ns.metadata?.name ?? "";
            if (excluded.has(name)) continue;
            if (!denied.has(name)) {
                findings.push({ urn, message: `${describe(ns)} has no default-deny NetworkPolicy (podSelector {}, policyTypes [Ingress, Egress], no ingress/egress rules)` });
            }
            if (!limited.has(name)) {
                findings.push({ urn, message: `${describe(ns)} has no LimitRange with a Container entry setting default.memory and defaultRequest.memory` });
            }
        }
        return findings;
    },
});
