import type { TemplateRule } from "../types";
import { parseApiVersion } from "../engine/gvk";
import { DEFAULT_NAMESPACE } from "../engine/scope";
import { violations } from "./lib/pod";

export type Params = Record<string, never>;

const INGRESS_GROUPS = new Set(["extensions", "networking.k8s.io"]);

export const rule: TemplateRule<Params> = {
    kind: "K8sUniqueIngressHost",
    template: "uniqueingresshost",
    category: "general",
    description: "Requires all Ingress rule hosts to be unique.\nDoes not handle hostname wildcards: https://kubernetes.io/docs/concepts/services-networking/ingress/",
    parameterSchema: null,
    validate({ review, inventory }) {
        if (review.kind.kind !== "Ingress" || !INGRESS_GROUPS.has(review.kind.group)) return [];
        const rules: unknown = review.object.spec?.rules;
        if (!Array.isArray(rules)) return [];
        const hosts = new Set(rules.map((r) => r?.host).filter((h): h is string => typeof h === "string"));
        if (hosts.size === 0) return [];
        const name = review.object.metadata?.name;
        const messages: string[] = [];
        for (const other of inventory.list("Ingress")) {
            if (!INGRESS_GROUPS.has(parseApiVersion(other.apiVersion).group)) continue;
            const otherNamespace = other.metadata?.namespace || DEFAULT_NAMESPACE;
            if (other.metadata?.name === name && otherNamespace === review.namespace) continue;
            const otherRules: unknown = other.spec?.rules;
            if (!Array.isArray(otherRules)) continue;
            for (const r of otherRules) {
                if (typeof r?.host === "string" && hosts.has(r.host)) {
                    messages.push(`Ingress host conflicts with an existing Ingress <${r.host}>`);
                }
            }
        }
        return violations(messages);
    },
};
