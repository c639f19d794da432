import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";

export interface WebIngressArgs {
    namespace: string;
    /** The host's first label; the host is <label>.<environment domain>. */
    hostLabel: string;
    serviceName: string;
    servicePort: number | string;
    labels: Record<string, string>;
    path?: string;
    /** Overrides the stack's proxy-read-timeout (the workflow tool uses 300 s). */
    readTimeout?: number;
    /** Response buffering; off for streaming back ends such as the bridge. */
    buffering?: boolean;
    annotations?: Record<string, string>;
}

export const hostOf = (cfg: StackConfig, label: string) => `${label}.${cfg.environment.domain}`;
export const tlsSecretName = (host: string) => `${host.replace(/\./g, "-")}-tls`;

/** The issuer and proxy annotations of section 8.2 (also used for Ingresses that charts create). */
export function ingressAnnotations(cfg: StackConfig, args: Pick<WebIngressArgs, "readTimeout" | "buffering" | "annotations"> = {}): Record<string, string> {
    const i = cfg.ingress;
    return {
        "cert-manager.io/cluster-issuer": i.issuer,
        // HTTPS only: ingress-nginx reads ssl-redirect (plain HTTP gets a 308 to HTTPS); allow-http is
        // not an ingress-nginx annotation, it is what the Gatekeeper httpsonly constraint checks.
        "nginx.ingress.kubernetes.io/ssl-redirect": "true",
        "kubernetes.io/ingress.allow-http": "false",
        "nginx.ingress.kubernetes.io/proxy-connect-timeout": String(i.proxyConnectTimeout),
        "nginx.ingress.kubernetes.io/proxy-send-timeout": String(i.proxySendTimeout),
        "nginx.ingress.kubernetes.io/proxy-read-timeout": String(args.readTimeout ?? i.proxyReadTimeout),
        "nginx.ingress.kubernetes.io/proxy-body-size": i.proxyBodySize,
        ...(args.buffering === false ? { "nginx.ingress.kubernetes.io/proxy-buffering": "off", "nginx.ingress.kubernetes.io/proxy-request-buffering": "off" } : {}),
        ...args.annotations,
    };
}

/** An Ingress with TLS (one secret per host), the stack's issuer and the proxy settings of section 8.2. */
export function webIngress(name: string, cfg: StackConfig, args: WebIngressArgs, opts: pulumi.CustomResourceOptions): k8s.networking.v1.Ingress {
    const host = hostOf(cfg, args.hostLabel);
    const i = cfg.ingress;
    const annotations = ingressAnnotations(cfg, args);
    return new k8s.networking.v1.Ingress(name, {
        metadata: { name, namespace: args.namespace, labels: args.labels, annotations },
        spec: {
            ingressClassName: i.className,
            tls: [{ hosts: [host], secretName: tlsSecretName(host) }],
            rules: [{
                host,
                http: { paths: [{ path: args.path ?? "/", pathType: "Prefix", backend: { service: { name: args.serviceName, port: typeof args.servicePort === "number" ? { number: args.servicePort } : { name: args.servicePort } } } }] },
            }],
        },
    }, opts);
}
