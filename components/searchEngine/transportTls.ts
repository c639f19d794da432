/**
 * TLS between the search engine's nodes (section 5.5): a generated CA and one node certificate that
 * every node presents; verification_mode certificate trusts the CA, not the host name.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as tls from "@pulumi/tls";
import type { StackConfig } from "../../config";

/** A CA and one node certificate for every node (verification_mode certificate: the CA, not the host name). */
export function transportCertificates(
    name: string,
    cfg: StackConfig,
    args: { namespace: string; headless: string; labels: Record<string, string>; secretName: string },
    opts: pulumi.CustomResourceOptions,
): k8s.core.v1.Secret {
    const hours = cfg.searchEngine.security.certValidityHours;
    const caKey = new tls.PrivateKey(`${name}-transport-ca`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, opts);
    const ca = new tls.SelfSignedCert(`${name}-transport-ca`, {
        privateKeyPem: caKey.privateKeyPem,
        isCaCertificate: true,
        validityPeriodHours: hours,
        subject: { commonName: `${cfg.searchEngine.clusterName} transport CA` },
        allowedUses: ["cert_signing", "crl_signing"],
    }, opts);
    const nodeKey = new tls.PrivateKey(`${name}-transport-node`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, opts);
    const domain = `${args.headless}.${args.namespace}.svc.cluster.local`;
    const request = new tls.CertRequest(`${name}-transport-node`, {
        privateKeyPem: nodeKey.privateKeyPem,
        subject: { commonName: domain },
        dnsNames: [`*.${domain}`, domain],
    }, opts);
    const cert = new tls.LocallySignedCert(`${name}-transport-node`, {
        certRequestPem: request.certRequestPem,
        caPrivateKeyPem: caKey.privateKeyPem,
        caCertPem: ca.certPem,
        validityPeriodHours: hours,
        allowedUses: ["digital_signature", "key_encipherment", "server_auth", "client_auth"],
    }, opts);
    return new k8s.core.v1.Secret(`${name}-transport-tls`, {
        metadata: { name: args.secretName, namespace: args.namespace, labels: args.labels },
        type: "Opaque",
        stringData: { "ca.crt": ca.certPem, "tls.crt": cert.certPem, "tls.key": nodeKey.privateKeyPem },
    }, opts);
}
