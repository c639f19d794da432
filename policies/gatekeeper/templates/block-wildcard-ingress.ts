import type { TemplateRule } from "../types";
import { violations } from "./lib/pod";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sBlockWildcardIngress",
    template: "block-wildcard-ingress",
    category: "general",
    description: "Users should not be able to create Ingresses with a blank or wildcard (*) hostname since that would enable them to intercept traffic for other services in the cluster, even if they don't have access to those services.",
    parameterSchema: null,
    validate({ review }) {
        if (review.kind.kind !== "Ingress") return [];
        const rules = review.object.spec?.rules;
        if (!Array.isArray(rules)) return [];
        const messages: string[] = [];
        for (const r of rules) {
            // object.get(rule, "host", ""): an omitted host is the same as a blank one (it matches
            // every hostname); a rule that is not an object, or a host that is not a string (null),
            // makes the builtin or contains() fail, and the violation is undefined, as gator reports.
            if (r === null || typeof r !== "object" || Array.isArray(r)) continue;
            const host = r.host === undefined ? "" : r.host;
            if (typeof host !== "string") continue;
            if (host === "" || host.includes("*")) {
                messages.push(
                    `Hostname '${host}' is not allowed since it counts as a wildcard, which can be used to intercept traffic from other applications.`,
                );
            }
        }
        return violations(messages);
    },
};
