import type { K8sObject, TemplateRule } from "../types";
import { derivedFrom } from "../engine/derived-index";
import { violations } from "./lib/pod";

export type Params = Record<string, never>;

/**
 * Selectors are compared within the Service's namespace, as the template's description states
 * (selectors only select pods of their own namespace). Services without a selector select no pods
 * and are not compared.
 */
export const rule: TemplateRule<Params> = {
    kind: "K8sUniqueServiceSelector",
    template: "uniqueserviceselector",
    category: "general",
    description: "Requires Services to have unique selectors within a namespace. Selectors are considered the same if they have identical keys and values. Selectors may share a key/value pair so long as there is at least one distinct key/value pair between them.\nhttps://kubernetes.io/docs/concepts/services-networking/service/#defining-a-service",
    parameterSchema: null,
    validate({ review, inventory }) {
        if (review.kind.kind !== "Service" || review.kind.group !== "" || review.kind.version !== "v1") return [];
        // As the library's Rego: every Service of every namespace (data.inventory.namespace[namespace]),
        // and a Service without a selector has the selector "" like any other selectorless one.
        const selector = flattenSelector(review.object);
        const services = inventory.list("Service", { group: "" });
        const bySelector = derivedFrom(services, "uniqueserviceselector:bySelector", servicesBySelector);
        const messages: string[] = [];
        for (const other of bySelector.get(selector) ?? []) {
            const namespace = other.metadata?.namespace;
            if (other.metadata?.name === review.object.metadata?.name && namespace === review.namespace && other.apiVersion === "v1") continue;
            messages.push(`same selector as service <${other.metadata?.name}> in namespace <${namespace}>`);
        }
        return violations(messages);
    },
};

function servicesBySelector(services: readonly K8sObject[]): Map<string, K8sObject[]> {
    const bySelector = new Map<string, K8sObject[]>();
    for (const service of services) {
        const selector = flattenSelector(service);
        let same = bySelector.get(selector);
        if (!same) bySelector.set(selector, (same = []));
        same.push(service);
    }
    return bySelector;
}

/**
 * "key:value" pairs, sorted and comma-joined; "" for no selector. A value that is not a string
 * (null) makes concat fail, which drops that pair in Rego's comprehension.
 */
function flattenSelector(service: K8sObject): string {
    const selector = service.spec?.selector;
    if (!selector || typeof selector !== "object") return "";
    return Object.entries(selector)
        .filter(([, v]) => typeof v === "string")
        .map(([k, v]) => `${k}:${v}`)
        .sort()
        .join(",");
}
