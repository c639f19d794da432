/**
 * The e2e's stand-in random and tls providers make real material: keys, certificates and requests
 * are read back and verified by openssl (and the OpenSSH encodings by ssh-keygen).
 */
import assert from "node:assert/strict";
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { standInProvider } from "./provider";
import { randomString } from "./random";
import * as tls from "./tls";

const has = (cmd: string) => spawnSync("sh", ["-c", `command -v ${cmd}`]).status === 0;
const need = (cmd: string) => {
    if (has(cmd)) return undefined;
    if (process.env.CI === "true") throw new Error(`${cmd} is required under CI=true`);
    return `${cmd} is not installed`;
};
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "standins-"));
process.on("exit", () => fs.rmSync(dir, { recursive: true, force: true }));
const file = (name: string, text: string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, text, { mode: 0o600 });
    return p;
};
const openssl = (...args: string[]) => execFileSync("openssl", args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

for (const [algorithm, ecdsaCurve, opensslType] of [["ECDSA", "P256", "prime256v1"], ["ED25519", undefined, "ED25519"]] as const) {
    test(`PrivateKey ${algorithm}: openssl reads the key and derives the same public key; ssh-keygen the same OpenSSH key and fingerprint`, { skip: need("openssl") }, (t) => {
        const k = tls.privateKey({ algorithm, ecdsaCurve });
        const priv = file(`${algorithm}.pem`, k.privateKeyPem);
        const text = openssl("pkey", "-in", priv, "-noout", "-text");
        assert.match(text, new RegExp(opensslType));
        assert.equal(openssl("pkey", "-in", priv, "-pubout"), k.publicKeyPem);
        assert.equal(openssl("pkey", "-in", file(`${algorithm}.p8`, k.privateKeyPemPkcs8), "-pubout"), k.publicKeyPem);
        if (algorithm === "ECDSA") {
            assert.match(k.privateKeyPem, /^-----BEGIN EC PRIVATE KEY-----/);
            const check = spawnSync("openssl", ["ec", "-in", priv, "-check", "-noout"], { encoding: "utf8" });
            assert.equal(check.status, 0, check.stderr);
            assert.match(check.stdout + check.stderr, /EC Key valid/);
        }
        const skip = need("ssh-keygen");
        if (skip) return t.skip(skip);
        const ossh = file(`${algorithm}.ossh`, k.privateKeyOpenssh);
        const derived = execFileSync("ssh-keygen", ["-y", "-f", ossh], { encoding: "utf8" }).trim();
        assert.equal(derived.split(" ").slice(0, 2).join(" "), k.publicKeyOpenssh.trim());
        const fp = execFileSync("ssh-keygen", ["-l", "-E", "sha256", "-f", file(`${algorithm}.pub`, k.publicKeyOpenssh)], { encoding: "utf8" });
        assert.equal(fp.split(" ")[1], k.publicKeyFingerprintSha256);
        const md5 = execFileSync("ssh-keygen", ["-l", "-E", "md5", "-f", path.join(dir, `${algorithm}.pub`)], { encoding: "utf8" });
        assert.equal(md5.split(" ")[1], `MD5:${k.publicKeyFingerprintMd5}`);
    });
}

test("SelfSignedCert, CertRequest, LocallySignedCert: openssl verifies the chain, the request's signature, and reads subject, SANs, usages and validity", { skip: need("openssl") }, () => {
    const caKey = tls.privateKey({ algorithm: "ECDSA", ecdsaCurve: "P256" });
    const ca = tls.selfSignedCert({
        privateKeyPem: caKey.privateKeyPem, isCaCertificate: true, validityPeriodHours: 24 * 3650, earlyRenewalHours: 720,
        subject: { commonName: "ops CA", organization: "Ops Org" }, allowedUses: ["cert_signing", "crl_signing", "digital_signature"],
    });
    const caPem = file("ca.crt", ca.certPem);
    const caText = openssl("x509", "-in", caPem, "-noout", "-text");
    assert.match(caText, /Subject: O ?= ?Ops Org, CN ?= ?ops CA/);
    assert.match(caText, /Issuer: O ?= ?Ops Org, CN ?= ?ops CA/);
    assert.match(caText, /CA:TRUE/);
    assert.match(caText, /Digital Signature, Certificate Sign, CRL Sign/);
    assert.match(caText, /Subject Key Identifier/);
    assert.match(caText, /ecdsa-with-SHA256/);
    assert.match(openssl("verify", "-CAfile", caPem, caPem), /OK/);
    const hours = (Date.parse(ca.validityEndTime) - Date.parse(ca.validityStartTime)) / 3600_000;
    assert.equal(hours, 24 * 3650);
    assert.equal(ca.readyForRenewal, false);
    const end = openssl("x509", "-in", caPem, "-noout", "-enddate").trim().replace("notAfter=", "");
    assert.equal(new Date(end).toISOString().replace(/\.\d+Z$/, "Z"), ca.validityEndTime);

    const nodeKey = tls.privateKey({ algorithm: "ECDSA", ecdsaCurve: "P256" });
    const domain = "search-engine-headless.search.svc.cluster.local";
    const req = tls.certRequest({ privateKeyPem: nodeKey.privateKeyPem, subject: { commonName: domain }, dnsNames: [`*.${domain}`, domain] });
    const reqPem = file("node.csr", req.certRequestPem);
    const reqOut = spawnSync("openssl", ["req", "-in", reqPem, "-verify", "-noout", "-text"], { encoding: "utf8" });
    assert.equal(reqOut.status, 0, reqOut.stderr);
    assert.match(reqOut.stdout + reqOut.stderr, /verify OK/i);
    assert.match(reqOut.stdout, new RegExp(`DNS:\\*\\.${domain.replace(/\./g, "\\.")}, DNS:${domain.replace(/\./g, "\\.")}`));

    const leaf = tls.locallySignedCert({
        certRequestPem: req.certRequestPem, caPrivateKeyPem: caKey.privateKeyPem, caCertPem: ca.certPem, validityPeriodHours: 48,
        allowedUses: ["digital_signature", "key_encipherment", "server_auth", "client_auth"],
    });
    const leafPem = file("node.crt", leaf.certPem);
    assert.match(openssl("verify", "-CAfile", caPem, leafPem), /node\.crt: OK/);
    const leafText = openssl("x509", "-in", leafPem, "-noout", "-text");
    assert.match(leafText, new RegExp(`Subject: CN ?= ?${domain.replace(/\./g, "\\.")}`));
    assert.match(leafText, /Issuer: O ?= ?Ops Org, CN ?= ?ops CA/);
    assert.match(leafText, /Digital Signature, Key Encipherment/);
    assert.match(leafText, /TLS Web Server Authentication, TLS Web Client Authentication/);
    assert.match(leafText, /CA:FALSE/);
    assert.match(leafText, /DNS:\*\.search-engine-headless/);
    // The certificate carries the node key: its public key is the one openssl derives from the private key.
    assert.equal(openssl("x509", "-in", leafPem, "-noout", "-pubkey"), nodeKey.publicKeyPem);
    assert.throws(() => tls.locallySignedCert({ certRequestPem: req.certRequestPem, caPrivateKeyPem: nodeKey.privateKeyPem, caCertPem: ca.certPem, validityPeriodHours: 1, allowedUses: [] }), /not the key of caCertPem/);
});

test("RandomPassword: length and character classes as asked, from the CSPRNG", () => {
    const a = randomString({ length: 48, special: false });
    assert.equal(a.length, 48);
    assert.match(a, /^[A-Za-z0-9]+$/);
    assert.notEqual(a, randomString({ length: 48, special: false }));
    const upperOnly = randomString({ length: 20, special: false, lower: false, upper: true, numeric: true });
    assert.match(upperOnly, /^[A-Z0-9]{20}$/);
    const withMins = randomString({ length: 8, special: true, minSpecial: 8 });
    assert.match(withMins, /^[!@#$%&*()\-_=+[\]{}<>:?]{8}$/);
});

test("provider diff: a changed input replaces, earlyRenewalHours updates in place, the same inputs change nothing", async () => {
    const p = standInProvider("tls", "0.0.0");
    const urn = "urn:pulumi:ci::ops::ops:platform:Issuers$tls:index/selfSignedCert:SelfSignedCert::issuers-ca-cert";
    const olds = { privateKeyPem: { "4dabf18193072939515e22adb298388d": "1b47061264138c4ac30d75fd1eb44270", value: "k" }, validityPeriodHours: 10, earlyRenewalHours: 1, allowedUses: ["cert_signing"], certPem: "x" };
    const same = { privateKeyPem: "k", validityPeriodHours: 10, earlyRenewalHours: 1, allowedUses: ["cert_signing"] };
    assert.deepEqual(await p.diff!("id", urn, olds, same), { changes: false, replaces: [], deleteBeforeReplace: false });
    assert.deepEqual((await p.diff!("id", urn, olds, { ...same, validityPeriodHours: 20 })).replaces, ["validityPeriodHours"]);
    const renew = await p.diff!("id", urn, olds, { ...same, earlyRenewalHours: 2 });
    assert.deepEqual([renew.changes, renew.replaces], [true, []]);
    const unknown = await p.diff!("id", urn, olds, { ...same, privateKeyPem: "04da6b54-80e4-46f7-96ec-b56ff0331ba9" });
    assert.deepEqual(unknown.replaces, ["privateKeyPem"]);
    const failures = (await p.check!(urn, {}, { ...same, allowedUses: ["cert_sign"] })).failures!;
    assert.match(failures[0].reason, /"cert_sign" is not one of/);
});
