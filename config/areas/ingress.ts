import { int, oneOf, patterned, seconds, subdomainName, namespaceName } from "../schema";

export const CLUSTER_ISSUERS = ["self-signed-ca-issuer", "lets-encrypt"] as const;
export type ClusterIssuer = (typeof CLUSTER_ISSUERS)[number];

const bodySize = patterned(/^\d+[kmg]?$/, 'an nginx size such as "50m"');

/** Ingress defaults of section 8.2 and the issuer that signs every host's certificate. */
export const ingress = {
    className: subdomainName("the ingress class of every Ingress", "nginx"),
    issuer: oneOf("the cluster issuer named in every Ingress's cert-manager.io/cluster-issuer annotation", CLUSTER_ISSUERS, "self-signed-ca-issuer"),
    proxyConnectTimeout: seconds("nginx proxy-connect-timeout of the web front ends", 300, 3600),
    proxySendTimeout: seconds("nginx proxy-send-timeout of the web front ends", 300, 3600),
    proxyReadTimeout: seconds("nginx proxy-read-timeout of the web front ends", 600, 3600),
    workflowProxyReadTimeout: seconds("nginx proxy-read-timeout of the workflow tool's hosts", 300, 3600),
    proxyBodySize: bodySize("nginx proxy-body-size of every Ingress", "50m"),
    upstreamKeepaliveConnections: int("ingress controller upstream-keepalive-connections", 50, { min: 1, max: 10000 }),
    upstreamKeepaliveTimeout: seconds("ingress controller upstream-keepalive-timeout", 60, 3600),
    controllerNamespace: namespaceName("the namespace of the ingress controller, the only source of traffic to web front ends", "ingress-nginx"),
};
