import type { Params } from "../../gatekeeper/templates/httpsonly";
import { get, present } from "../cel";
import type { AdmissionRule } from "../types";

/** Ingresses carry kubernetes.io/ingress.allow-http: "false" and, unless tlsOptional, a tls section. */
export const admission: AdmissionRule<Params> = {
    kind: "K8sHttpsOnly",
    template: "httpsonly",
    checks: (p, s) => {
        const annotations = get(s.o, "metadata.annotations", "{}");
        const httpDisabled = `("kubernetes.io/ingress.allow-http" in ${annotations} && ${annotations}["kubernetes.io/ingress.allow-http"] == "false")`;
        const tls = `(${present(s.o, "spec.tls")} && size(${s.o}.spec.tls) > 0)`;
        const isIngress = `${s.kind} == "Ingress" && (${s.group} == "extensions" || ${s.group} == "networking.k8s.io")`;
        return [{
            expression: `!(${isIngress}) || (${httpDisabled}${p.tlsOptional ? "" : ` && ${tls}`})`,
            message: p.tlsOptional
                ? "Ingress should be https: the kubernetes.io/ingress.allow-http: \"false\" annotation is required"
                : "Ingress should be https: tls configuration and the kubernetes.io/ingress.allow-http: \"false\" annotation are required",
        }];
    },
};
