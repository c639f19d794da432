import type { TemplateRule } from "../types";
import { regoFormat } from "./lib/pod";

export interface Params {
    allowedIPs?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sExternalIPs",
    template: "externalip",
    category: "general",
    description: "Restricts Service externalIPs to an allowed list of IP addresses.\nhttps://kubernetes.io/docs/concepts/services-networking/service/#external-ips",
    parameterSchema: {
        "type": "object",
        "properties": {
            "allowedIPs": {
                "type": "array",
                "description": "An allow-list of external IP addresses.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        if (review.kind.kind !== "Service" || review.kind.group !== "") return [];
        const externalIPs: unknown = review.object.spec?.externalIPs;
        if (!Array.isArray(externalIPs)) return [];
        const allowed = new Set(parameters.allowedIPs ?? []);
        const forbidden = new Set(externalIPs.filter((ip) => !allowed.has(ip)));
        if (forbidden.size === 0) return [];
        return [{ msg: `service has forbidden external IPs: ${regoFormat(forbidden)}` }];
    },
};
