/**
 * Section 2.11: every Ingress has a TLS secret per host and names its certificate issuer by
 * annotation; the issuers of the cluster are self-signed-ca-issuer and lets-encrypt.
 */
import { specRule, type Finding } from "../pack/rule";
import { describe, type StackView } from "../pack/stack";

export const ISSUER_ANNOTATION = "cert-manager.io/cluster-issuer";

export interface IngressTlsConfig {
    clusterIssuers: string[];
}

export const rule = specRule<IngressTlsConfig>({
    name: "ingress-tls-issuer",
    description: "Every Ingress serves each host over TLS with a secret and names one of the cluster issuers in cert-manager.io/cluster-issuer (section 2.11)",
    configSchema: {
        properties: {
            clusterIssuers: { type: "array", items: { type: "string" }, default: ["self-signed-ca-issuer", "lets-encrypt"], description: "the ClusterIssuers an Ingress may name" },
        },
    },
    check(stack: StackView, config): Finding[] {
        const findings: Finding[] = [];
        for (const { urn, object: ing } of stack.ofKind("Ingress", "networking.k8s.io")) {
            const issuer = ing.metadata?.annotations?.[ISSUER_ANNOTATION];
            if (issuer === undefined) findings.push({ urn, message: `${describe(ing)} has no ${ISSUER_ANNOTATION} annotation` });
            else if (!config.clusterIssuers.includes(issuer)) findings.push({ urn, message: `${describe(ing)} names cluster issuer ${JSON.stringify(issuer)}; expected one of ${config.clusterIssuers.join(", ")}` });
            const tls: any[] = Array.isArray(ing.spec?.tls) ? ing.spec.tls : [];
            if (tls.length === 0) {
                findings.push({ urn, message: `${describe(ing)} has no spec.tls` });
                continue;
            }
            tls.filter((t) => !t?.secretName).forEach((t) => findings.push({ urn, message: `${describe(ing)} has a TLS entry for ${(t?.hosts ?? []).join(", ") || "(no host)"} without a secretName` }));
            const covered = new Set(tls.flatMap((t) => (t?.secretName ? t.hosts ?? [] : [])));
            for (const host of (ing.spec?.rules ?? []).map((r: any) => r?.host)) {
                if (!host) findings.push({ urn, message: `${describe(ing)} has a rule without a host, which TLS cannot cover` });
                else if (!covered.has(host)) findings.push({ urn, message: `${describe(ing)} serves host ${host} without a TLS entry (hosts + secretName) for it` });
            }
        }
        return findings;
    },
});
