import type { TemplateRule } from "../types";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sBlockNodePort",
    template: "block-nodeport-services",
    category: "general",
    description: "Disallows all Services with type NodePort.\nhttps://kubernetes.io/docs/concepts/services-networking/service/#nodeport",
    parameterSchema: null,
    validate({ review }) {
        if (review.kind.kind !== "Service" || review.object.spec?.type !== "NodePort") return [];
        return [{ msg: "User is not allowed to create service of type NodePort" }];
    },
};
