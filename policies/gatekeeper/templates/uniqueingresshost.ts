import type { K8sObject, TemplateRule } from "../types";
import { derivedFrom } from "../engine/derived-index";
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
        const byHost = derivedFrom(inventory.list("Ingress"), "uniqueingresshost:byHost", ingressesByHost);
        const messages: string[] = [];
        for (const host of hosts) {
            const users = byHost.get(host) ?? [];
            if (users.some((u) => u.name !== name || u.namespace !== review.namespace)) {
                messages.push(`ingress host conflicts with an existing ingress <${host}>`);
            }
        }
        return violations(messages);
    },
};

interface IngressRef {
    name: string | undefined;
    namespace: string;
}

function ingressesByHost(ingresses: readonly K8sObject[]): Map<string, IngressRef[]> {
    const byHost = new Map<string, IngressRef[]>();
    for (const ingress of ingresses) {
        if (!INGRESS_GROUPS.has(parseApiVersion(ingress.apiVersion).group)) continue;
        const rules: unknown = ingress.spec?.rules;
        if (!Array.isArray(rules)) continue;
        const ref = { name: ingress.metadata?.name, namespace: ingress.metadata?.namespace || DEFAULT_NAMESPACE };
        for (const r of rules) {
            if (typeof r?.host !== "string") continue;
            let users = byHost.get(r.host);
            if (!users) byHost.set(r.host, (users = []));
            users.push(ref);
        }
    }
    return byHost;
}
