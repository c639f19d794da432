import type { K8sObject, TemplateRule } from "../types";
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
        const selector = flattenSelector(review.object);
        if (selector === "") return [];
        const messages: string[] = [];
        for (const other of inventory.list("Service", { group: "", namespace: review.namespace })) {
            if (other.metadata?.name === review.object.metadata?.name && other.apiVersion === "v1") continue;
            if (flattenSelector(other) === selector) {
                messages.push(`same selector as service <${other.metadata?.name}> in namespace <${review.namespace}>`);
            }
        }
        return violations(messages);
    },
};

/** "key:value" pairs, sorted and comma-joined; "" for no selector. */
function flattenSelector(service: K8sObject): string {
    const selector = service.spec?.selector;
    if (!selector || typeof selector !== "object") return "";
    return Object.entries(selector)
        .map(([k, v]) => `${k}:${v}`)
        .sort()
        .join(",");
}
