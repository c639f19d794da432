/**
 * Certificate issuers (section 2.11): self-signed-ca-issuer signs with a CA whose key pair Pulumi
 * generates (@pulumi/tls) and keeps in a kubernetes.io/tls Secret of the cert-manager namespace;
 * lets-encrypt is an ACME issuer with an http01 solver on the nginx ingress class.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as tls from "@pulumi/tls";
import type { StackConfig } from "../../config";
import { CLUSTER_ISSUERS } from "../../config/areas/ingress";
import { environmentLabels } from "../lib/labels";

export interface IssuersArgs {
    config: StackConfig;
    /** The cert-manager Chart: the ClusterIssuer CRD and the controller come with it. */
    certManager: pulumi.Resource;
}

export const [SELF_SIGNED_CA_ISSUER, LETS_ENCRYPT_ISSUER] = CLUSTER_ISSUERS;

/**
 * Labels of the http01 solver pods cert-manager creates in an Ingress's namespace while a certificate
 * is issued (pod-app-labels); component acme-solver is one of required-probes' exceptions (the
 * solver serves one token for the length of a challenge and has no probe setting).
 */
export const ACME_SOLVER_POD_LABELS = {
    "app.kubernetes.io/name": "cert-manager-acmesolver",
    "app.kubernetes.io/instance": LETS_ENCRYPT_ISSUER,
    "app.kubernetes.io/component": "acme-solver",
};

export class Issuers extends pulumi.ComponentResource {
    public readonly caCertificatePem: pulumi.Output<string>;
    public readonly names: string[];

    constructor(name: string, args: IssuersArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:Issuers", name, {}, opts);
        const cfg = args.config;
        const i = cfg.issuers;
        const ns = cfg.addons.certManager.namespace;
        const labels = environmentLabels(cfg);
        const child = { parent: this };

        const caKey = new tls.PrivateKey(`${name}-ca-key`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, child);
        const caCert = new tls.SelfSignedCert(`${name}-ca-cert`, {
            privateKeyPem: caKey.privateKeyPem,
            isCaCertificate: true,
            subject: { commonName: i.caCommonName, organization: i.caOrganization },
            validityPeriodHours: i.caValidityHours,
            earlyRenewalHours: i.caEarlyRenewalHours,
            allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
        }, child);
        const caSecret = new k8s.core.v1.Secret(`${name}-ca`, {
            metadata: { name: i.caSecretName, namespace: ns, labels },
            type: "kubernetes.io/tls",
            stringData: { "tls.crt": caCert.certPem, "tls.key": pulumi.secret(caKey.privateKeyPem), "ca.crt": caCert.certPem },
        }, child);

        const afterCertManager = { ...child, dependsOn: [args.certManager] };
        new k8s.apiextensions.CustomResource(`${name}-${SELF_SIGNED_CA_ISSUER}`, {
            apiVersion: "cert-manager.io/v1",
            kind: "ClusterIssuer",
            metadata: { name: SELF_SIGNED_CA_ISSUER, labels },
            spec: { ca: { secretName: caSecret.metadata.name } },
        }, { ...afterCertManager, dependsOn: [args.certManager, caSecret] });
        new k8s.apiextensions.CustomResource(`${name}-${LETS_ENCRYPT_ISSUER}`, {
            apiVersion: "cert-manager.io/v1",
            kind: "ClusterIssuer",
            metadata: { name: LETS_ENCRYPT_ISSUER, labels },
            spec: {
                acme: {
                    email: i.acmeEmail,
                    server: i.acmeServer,
                    privateKeySecretRef: { name: i.acmeAccountKeySecretName },
                    solvers: [{ http01: { ingress: { class: cfg.ingress.className, podTemplate: { metadata: { labels: ACME_SOLVER_POD_LABELS } } } } }],
                },
            },
        }, afterCertManager);

        this.caCertificatePem = caCert.certPem;
        this.names = [...CLUSTER_ISSUERS];
        this.registerOutputs({ caCertificatePem: this.caCertificatePem, names: this.names });
    }
}
