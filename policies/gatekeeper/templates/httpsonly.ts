import type { TemplateRule } from "../types";

export interface Params {
    tlsOptional?: boolean;
}

const INGRESS_API = /^(extensions|networking\.k8s\.io)\//;

export const rule: TemplateRule<Params> = {
    kind: "K8sHttpsOnly",
    template: "httpsonly",
    category: "general",
    description: "Requires Ingress resources to be HTTPS only.  Ingress resources must include the `kubernetes.io/ingress.allow-http` annotation, set to `false`. By default a valid TLS {} configuration is required, this can be made optional by setting the `tlsOptional` parameter to `true`.\nhttps://kubernetes.io/docs/concepts/services-networking/ingress/#tls",
    // templates.json carries this schema damaged (see its meta.warnings): the tlsOptional description is repaired here.
    parameterSchema: {
        "type": "object",
        "description": "Requires Ingress resources to be HTTPS only.  Ingress resources must include the `kubernetes.io/ingress.allow-http` annotation, set to `false`. By default a valid TLS {} configuration is required, this can be made optional by setting the `tlsOptional` parameter to `true`.",
        "properties": {
            "tlsOptional": {
                "type": "boolean",
                "description": "When set to `true` the TLS {} is optional, defaults to false."
            }
        }
    },
    validate({ review, parameters }) {
        const ingress = review.object;
        if (ingress.kind !== "Ingress" || !INGRESS_API.test(ingress.apiVersion ?? "")) return [];
        const httpDisabled = ingress.metadata?.annotations?.["kubernetes.io/ingress.allow-http"] === "false";
        const tls = ingress.spec?.tls;
        const hasTls = Array.isArray(tls) && tls.length > 0;
        const name = ingress.metadata?.name;
        if (parameters.tlsOptional) {
            if (httpDisabled) return [];
            return [{ msg: `Ingress should be https. The allow-http=false annotation is required for ${name}` }];
        }
        if (httpDisabled && hasTls) return [];
        return [{ msg: `Ingress should be https. tls configuration and allow-http=false annotation are required for ${name}` }];
    },
};
