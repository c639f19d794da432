import type { TemplateRule } from "../types";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sBlockLoadBalancer",
    template: "block-loadbalancer-services",
    category: "general",
    description: "Disallows all Services with type LoadBalancer.\nhttps://kubernetes.io/docs/concepts/services-networking/service/#loadbalancer",
    parameterSchema: null,
    validate({ review }) {
        if (review.kind.kind !== "Service" || review.object.spec?.type !== "LoadBalancer") return [];
        return [{ msg: "User is not allowed to create service of type LoadBalancer" }];
    },
};
