import type { K8sObject, TemplateRule } from "../types";
import { derivedFrom } from "../engine/derived-index";
import { parseApiVersion } from "../engine/gvk";
import { DEFAULT_NAMESPACE } from "../engine/scope";
import { regoFormat, violations } from "./lib/pod";

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
        // Any defined host is compared, null included (Rego's `other.spec.rules[_].host == host`).
        const hosts = new Map<string, unknown>();
        for (const r of rules) if (r?.host !== undefined) hosts.set(hostKey(r.host), r.host);
        if (hosts.size === 0) return [];
        const name = review.object.metadata?.name;
        const byHost = derivedFrom(inventory.list("Ingress"), "uniqueingresshost:byHost", ingressesByHost);
        const messages: string[] = [];
        for (const [key, host] of hosts) {
            const users = byHost.get(key) ?? [];
            if (users.some((u) => u.name !== name || u.namespace !== review.namespace)) {
                messages.push(`ingress host conflicts with an existing ingress <${regoFormat(host)}>`);
            }
        }
        return violations(messages);
    },
};

/** Hosts compare as Rego values: a string by its text, null (or any other value) by its JSON. */
const hostKey = (host: unknown) => (typeof host === "string" ? host : `\u0000${JSON.stringify(host)}`);

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
            if (r?.host === undefined) continue;
            const key = hostKey(r.host);
            let users = byHost.get(key);
            if (!users) byHost.set(key, (users = []));
            users.push(ref);
        }
    }
    return byHost;
}
