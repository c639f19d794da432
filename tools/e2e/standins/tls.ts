/**
 * STAND-IN for the tls provider (pulumi-tls / terraform-provider-tls), for the e2e only: the Go
 * module proxy does not serve the real one. Implements the resources and properties the program
 * uses (PrivateKey ECDSA P256 and ED25519, SelfSignedCert, CertRequest, LocallySignedCert) with
 * real key and certificate material made with node:crypto; certificates and requests are DER
 * built by hand (der.ts). Output names and the values of `allowedUses` are the real provider's.
 */
import * as crypto from "node:crypto";
import * as der from "./der";

export interface Subject {
    commonName?: string;
    organization?: string;
    organizationalUnit?: string;
    country?: string;
    province?: string;
    locality?: string;
    postalCode?: string;
    streetAddresses?: string[];
    serialNumber?: string;
}

// ---- PrivateKey ------------------------------------------------------------------------------

export interface PrivateKeyInputs {
    algorithm: string;
    ecdsaCurve?: string;
}

const sshString = (b: Buffer | string) => {
    const body = typeof b === "string" ? Buffer.from(b) : b;
    const len = Buffer.alloc(4);
    len.writeUInt32BE(body.length);
    return Buffer.concat([len, body]);
};
const sshMpint = (b: Buffer) => {
    let i = 0;
    while (i < b.length - 1 && b[i] === 0) i++;
    let v = b.subarray(i);
    if (v[0] & 0x80) v = Buffer.concat([Buffer.from([0]), v]);
    return sshString(v);
};

/** The public key in the SSH wire format, and its type name. */
function sshPublic(key: crypto.KeyObject): { type: string; blob: Buffer; extra: (priv: crypto.KeyObject) => Buffer } {
    const jwk = key.export({ format: "jwk" });
    if (jwk.kty === "OKP" && jwk.crv === "Ed25519") {
        const pub = Buffer.from(jwk.x!, "base64url");
        const type = "ssh-ed25519";
        return {
            type,
            blob: Buffer.concat([sshString(type), sshString(pub)]),
            extra: (priv) => {
                const seed = Buffer.from(priv.export({ format: "jwk" }).d!, "base64url");
                return Buffer.concat([sshString(pub), sshString(Buffer.concat([seed, pub]))]);
            },
        };
    }
    if (jwk.kty === "EC" && jwk.crv === "P-256") {
        const q = Buffer.concat([Buffer.from([4]), Buffer.from(jwk.x!, "base64url"), Buffer.from(jwk.y!, "base64url")]);
        const type = "ecdsa-sha2-nistp256";
        return {
            type,
            blob: Buffer.concat([sshString(type), sshString("nistp256"), sshString(q)]),
            extra: (priv) => Buffer.concat([sshString("nistp256"), sshString(q), sshMpint(Buffer.from(priv.export({ format: "jwk" }).d!, "base64url"))]),
        };
    }
    throw new Error(`no SSH encoding for key type ${jwk.kty}/${jwk.crv}`);
}

/** openssh-key-v1, unencrypted (what ssh-keygen writes with an empty passphrase). */
function opensshPrivate(priv: crypto.KeyObject, pub: crypto.KeyObject): string {
    const ssh = sshPublic(pub);
    const check = crypto.randomBytes(4);
    let body = Buffer.concat([check, check, sshString(ssh.type), ssh.extra(priv), sshString("")]);
    const pad: number[] = [];
    for (let i = 1; (body.length + pad.length) % 8 !== 0; i++) pad.push(i);
    body = Buffer.concat([body, Buffer.from(pad)]);
    const count = Buffer.alloc(4);
    count.writeUInt32BE(1);
    const all = Buffer.concat([Buffer.from("openssh-key-v1\0"), sshString("none"), sshString("none"), sshString(""), count, sshString(ssh.blob), sshString(body)]);
    const b64 = all.toString("base64").replace(/(.{70})/g, "$1\n").replace(/\n$/, "");
    return `-----BEGIN OPENSSH PRIVATE KEY-----\n${b64}\n-----END OPENSSH PRIVATE KEY-----\n`;
}

export function privateKey(inputs: PrivateKeyInputs): Record<string, string> {
    let pair: crypto.KeyPairKeyObjectResult;
    let privateKeyPem: string;
    if (inputs.algorithm === "ECDSA") {
        if ((inputs.ecdsaCurve ?? "P224") !== "P256") throw new Error(`stand-in tls: ecdsaCurve "${inputs.ecdsaCurve}" not implemented (P256 only)`);
        pair = crypto.generateKeyPairSync("ec", { namedCurve: "P-256" });
        privateKeyPem = pair.privateKey.export({ format: "pem", type: "sec1" }) as string;
    } else if (inputs.algorithm === "ED25519") {
        pair = crypto.generateKeyPairSync("ed25519");
        privateKeyPem = pair.privateKey.export({ format: "pem", type: "pkcs8" }) as string;
    } else {
        throw new Error(`stand-in tls: algorithm "${inputs.algorithm}" not implemented (ECDSA P256 and ED25519 only)`);
    }
    const ssh = sshPublic(pair.publicKey);
    const md5 = crypto.createHash("md5").update(ssh.blob).digest("hex").replace(/(..)(?!$)/g, "$1:");
    return {
        privateKeyPem,
        privateKeyPemPkcs8: pair.privateKey.export({ format: "pem", type: "pkcs8" }) as string,
        privateKeyOpenssh: opensshPrivate(pair.privateKey, pair.publicKey),
        publicKeyPem: pair.publicKey.export({ format: "pem", type: "spki" }) as string,
        publicKeyOpenssh: `${ssh.type} ${ssh.blob.toString("base64")}\n`,
        publicKeyFingerprintMd5: md5,
        publicKeyFingerprintSha256: `SHA256:${crypto.createHash("sha256").update(ssh.blob).digest("base64").replace(/=+$/, "")}`,
    };
}

// ---- names, extensions, signatures ------------------------------------------------------------

/** The subject as a Name, attributes in the order Go's pkix.Name writes them (the real provider is Go). */
function name(s: Subject = {}): Buffer {
    const rdn = (o: string, v: Buffer) => der.set(der.seq(der.oid(o), v));
    const parts: Buffer[] = [];
    if (s.country) parts.push(rdn("2.5.4.6", der.printable(s.country)));
    if (s.organization) parts.push(rdn("2.5.4.10", der.utf8(s.organization)));
    if (s.organizationalUnit) parts.push(rdn("2.5.4.11", der.utf8(s.organizationalUnit)));
    if (s.locality) parts.push(rdn("2.5.4.7", der.utf8(s.locality)));
    if (s.province) parts.push(rdn("2.5.4.8", der.utf8(s.province)));
    for (const a of s.streetAddresses ?? []) parts.push(rdn("2.5.4.9", der.utf8(a)));
    if (s.postalCode) parts.push(rdn("2.5.4.17", der.utf8(s.postalCode)));
    if (s.serialNumber) parts.push(rdn("2.5.4.5", der.printable(s.serialNumber)));
    if (s.commonName) parts.push(rdn("2.5.4.3", der.utf8(s.commonName)));
    return der.seq(...parts);
}

const KEY_USAGE: Record<string, number> = {
    digital_signature: 0, content_commitment: 1, key_encipherment: 2, data_encipherment: 3, key_agreement: 4,
    cert_signing: 5, crl_signing: 6, encipher_only: 7, decipher_only: 8,
};
const EXT_KEY_USAGE: Record<string, string> = {
    any_extended: "2.5.29.37.0", server_auth: "1.3.6.1.5.5.7.3.1", client_auth: "1.3.6.1.5.5.7.3.2",
    code_signing: "1.3.6.1.5.5.7.3.3", email_protection: "1.3.6.1.5.5.7.3.4", ipsec_end_system: "1.3.6.1.5.5.7.3.5",
    ipsec_tunnel: "1.3.6.1.5.5.7.3.6", ipsec_user: "1.3.6.1.5.5.7.3.7", timestamping: "1.3.6.1.5.5.7.3.8",
    ocsp_signing: "1.3.6.1.5.5.7.3.9",
};

export function checkAllowedUses(uses: string[] = []): string[] {
    return uses.filter((u) => !(u in KEY_USAGE) && !(u in EXT_KEY_USAGE)).map((u) => `allowedUses: "${u}" is not one of ${[...Object.keys(KEY_USAGE), ...Object.keys(EXT_KEY_USAGE)].join(", ")}`);
}

const extension = (id: string, critical: boolean, value: Buffer) => der.seq(der.oid(id), ...(critical ? [der.bool(true)] : []), der.octets(value));

function subjectAltName(dnsNames: string[] = [], ipAddresses: string[] = [], uris: string[] = []): Buffer | undefined {
    const names = [
        ...dnsNames.map((d) => der.ia5(0x82, d)),
        ...ipAddresses.map((ip) => der.tlv(0x87, Buffer.from(ip.includes(":") ? ipv6(ip) : ip.split(".").map(Number)))),
        ...uris.map((u) => der.ia5(0x86, u)),
    ];
    return names.length ? der.seq(...names) : undefined;
}

function ipv6(ip: string): number[] {
    const [head, tail = ""] = ip.split("::");
    const h = head ? head.split(":") : [];
    const t = tail ? tail.split(":") : [];
    const groups = ip.includes("::") ? [...h, ...Array(8 - h.length - t.length).fill("0"), ...t] : h;
    return groups.flatMap((g) => [parseInt(g, 16) >> 8, parseInt(g, 16) & 0xff]);
}

/** The public key's BIT STRING content inside its SubjectPublicKeyInfo (what a key identifier hashes). */
function publicKeyBits(spki: Buffer): Buffer {
    const bitString = der.children(der.read(spki).content)[1];
    return bitString.content.subarray(1);
}
const keyId = (spki: Buffer) => crypto.createHash("sha1").update(publicKeyBits(spki)).digest();

interface CertOptions {
    uses?: string[];
    isCa?: boolean;
    dnsNames?: string[];
    ipAddresses?: string[];
    uris?: string[];
    san?: Buffer;
    subjectKeyId?: Buffer;
    authorityKeyId?: Buffer;
}

function extensions(o: CertOptions): Buffer {
    const uses = o.uses ?? [];
    const exts: Buffer[] = [];
    const ku = uses.filter((u) => u in KEY_USAGE).map((u) => KEY_USAGE[u]);
    if (ku.length) exts.push(extension("2.5.29.15", true, der.namedBits(ku)));
    const eku = uses.filter((u) => u in EXT_KEY_USAGE).map((u) => der.oid(EXT_KEY_USAGE[u]));
    if (eku.length) exts.push(extension("2.5.29.37", false, der.seq(...eku)));
    exts.push(extension("2.5.29.19", true, o.isCa ? der.seq(der.bool(true)) : der.seq()));
    if (o.subjectKeyId) exts.push(extension("2.5.29.14", false, der.octets(o.subjectKeyId)));
    if (o.authorityKeyId) exts.push(extension("2.5.29.35", false, der.seq(der.tlv(0x80, o.authorityKeyId))));
    const san = o.san ?? subjectAltName(o.dnsNames, o.ipAddresses, o.uris);
    if (san) exts.push(extension("2.5.29.17", false, san));
    return der.seq(...exts);
}

/** The signature algorithm of a signing key, and the signature itself. */
function signer(key: crypto.KeyObject): { alg: Buffer; sign: (data: Buffer) => Buffer; name: string } {
    switch (key.asymmetricKeyType) {
        case "ec":
            return { alg: der.seq(der.oid("1.2.840.10045.4.3.2")), sign: (d) => crypto.sign("sha256", d, { key, dsaEncoding: "der" }), name: "ECDSA" };
        case "ed25519":
            return { alg: der.seq(der.oid("1.3.101.112")), sign: (d) => crypto.sign(null, d, key), name: "ED25519" };
        case "rsa":
            return { alg: der.seq(der.oid("1.2.840.113549.1.1.11"), der.nul()), sign: (d) => crypto.sign("sha256", d, key), name: "RSA" };
        default:
            throw new Error(`stand-in tls: no signature for key type ${key.asymmetricKeyType}`);
    }
}

interface Issued {
    certPem: string;
    validityStartTime: string;
    validityEndTime: string;
    readyForRenewal: boolean;
}

function certificate(args: { subject: Buffer; issuer: Buffer; spki: Buffer; signingKey: crypto.KeyObject; hours: number; earlyRenewalHours?: number } & CertOptions): Issued {
    const start = new Date(Math.floor(Date.now() / 1000) * 1000);
    const end = new Date(start.getTime() + args.hours * 3600_000);
    const s = signer(args.signingKey);
    const serial = crypto.randomBytes(16);
    serial[0] &= 0x7f;
    const tbs = der.seq(
        der.explicit(0, der.uint(2)),
        der.uint(serial),
        s.alg,
        args.issuer,
        der.seq(der.time(start), der.time(end)),
        args.subject,
        args.spki,
        der.explicit(3, extensions(args)),
    );
    const cert = der.seq(tbs, s.alg, der.bits(s.sign(tbs)));
    const renewAt = end.getTime() - (args.earlyRenewalHours ?? 0) * 3600_000;
    return {
        certPem: der.pem("CERTIFICATE", cert),
        validityStartTime: start.toISOString().replace(/\.\d+Z$/, "Z"),
        validityEndTime: end.toISOString().replace(/\.\d+Z$/, "Z"),
        readyForRenewal: Date.now() >= renewAt,
    };
}

const spkiOf = (key: crypto.KeyObject) => crypto.createPublicKey(key).export({ format: "der", type: "spki" }) as Buffer;

// ---- SelfSignedCert, CertRequest, LocallySignedCert -------------------------------------------

export interface SelfSignedCertInputs {
    privateKeyPem: string;
    subject?: Subject;
    validityPeriodHours: number;
    earlyRenewalHours?: number;
    allowedUses: string[];
    isCaCertificate?: boolean;
    dnsNames?: string[];
    ipAddresses?: string[];
    uris?: string[];
    setSubjectKeyId?: boolean;
}

export function selfSignedCert(i: SelfSignedCertInputs): Issued & { keyAlgorithm: string } {
    const key = crypto.createPrivateKey(i.privateKeyPem);
    const spki = spkiOf(key);
    const subject = name(i.subject);
    const ski = i.isCaCertificate || i.setSubjectKeyId ? keyId(spki) : undefined;
    const issued = certificate({
        subject, issuer: subject, spki, signingKey: key, hours: i.validityPeriodHours, earlyRenewalHours: i.earlyRenewalHours,
        uses: i.allowedUses, isCa: i.isCaCertificate, dnsNames: i.dnsNames, ipAddresses: i.ipAddresses, uris: i.uris, subjectKeyId: ski,
    });
    return { ...issued, keyAlgorithm: signer(key).name };
}

export interface CertRequestInputs {
    privateKeyPem: string;
    subject?: Subject;
    dnsNames?: string[];
    ipAddresses?: string[];
    uris?: string[];
}

export function certRequest(i: CertRequestInputs): { certRequestPem: string; keyAlgorithm: string } {
    const key = crypto.createPrivateKey(i.privateKeyPem);
    const s = signer(key);
    const san = subjectAltName(i.dnsNames, i.ipAddresses, i.uris);
    // extensionRequest (PKCS#9) carrying the subjectAltName, as Go's x509.CreateCertificateRequest writes it.
    const attributes = san ? [der.seq(der.oid("1.2.840.113549.1.9.14"), der.set(der.seq(extension("2.5.29.17", false, san))))] : [];
    const info = der.seq(der.uint(0), name(i.subject), spkiOf(key), der.tlv(0xa0, ...attributes));
    const csr = der.seq(info, s.alg, der.bits(s.sign(info)));
    return { certRequestPem: der.pem("CERTIFICATE REQUEST", csr), keyAlgorithm: s.name };
}

export interface LocallySignedCertInputs {
    certRequestPem: string;
    caPrivateKeyPem: string;
    caCertPem: string;
    validityPeriodHours: number;
    earlyRenewalHours?: number;
    allowedUses: string[];
    isCaCertificate?: boolean;
    setSubjectKeyId?: boolean;
}

/** Signs the request's subject, key and subjectAltName with the CA's key; the issuer is the CA certificate's subject. */
export function locallySignedCert(i: LocallySignedCertInputs): Issued & { caKeyAlgorithm: string } {
    const csr = der.unpem("CERTIFICATE REQUEST", i.certRequestPem);
    const [info] = der.children(der.read(csr).content);
    const [, subject, spki, attrs] = der.children(info.content);
    let san: Buffer | undefined;
    for (const attr of attrs ? der.children(attrs.content) : []) {
        const [id, values] = der.children(attr.content);
        if (!id.raw.equals(der.oid("1.2.840.113549.1.9.14"))) continue;
        for (const ext of der.children(der.children(values.content)[0].content)) {
            const parts = der.children(ext.content);
            if (parts[0].raw.equals(der.oid("2.5.29.17"))) san = parts[parts.length - 1].content;
        }
    }
    const ca = der.unpem("CERTIFICATE", i.caCertPem);
    const caTbs = der.children(der.children(der.read(ca).content)[0].content);
    const offset = caTbs[0].tag === 0xa0 ? 1 : 0;
    const caSubject = caTbs[offset + 4].raw;
    const caSpki = caTbs[offset + 5].raw;
    const caKey = crypto.createPrivateKey(i.caPrivateKeyPem);
    if (!spkiOf(caKey).equals(caSpki)) throw new Error("stand-in tls: caPrivateKeyPem is not the key of caCertPem");
    const issued = certificate({
        subject: subject.raw, issuer: caSubject, spki: spki.raw, signingKey: caKey, hours: i.validityPeriodHours, earlyRenewalHours: i.earlyRenewalHours,
        uses: i.allowedUses, isCa: i.isCaCertificate, san, subjectKeyId: i.isCaCertificate || i.setSubjectKeyId ? keyId(spki.raw) : undefined,
        authorityKeyId: keyId(caSpki),
    });
    return { ...issued, caKeyAlgorithm: signer(caKey).name };
}
