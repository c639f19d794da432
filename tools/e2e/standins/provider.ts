/**
 * STAND-IN provider plugins for the e2e only (tools/e2e/run.sh puts them on PATH as
 * pulumi-resource-random and pulumi-resource-tls): the Go module proxy serves neither real
 * provider. Served over the provider gRPC protocol by @pulumi/pulumi's provider server:
 *   node --import tsx tools/e2e/standins/provider.ts random|tls <engine address>
 * Every input of these resources forces a replacement, as in the real providers, except
 * earlyRenewalHours (updated in place). Read returns the stored state: nothing outside exists.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { main, type CheckFailure, type Provider } from "@pulumi/pulumi/provider";
import { checkRandom, randomString, type RandomInputs } from "./random";
import * as tls from "./tls";

const SECRET_SIG = "1b47061264138c4ac30d75fd1eb44270";
const SIG_KEY = "4dabf18193072939515e22adb298388d";
const UNKNOWN = "04da6b54-80e4-46f7-96ec-b56ff0331ba9";

/** A property value without the engine's secret wrappers (the provider accepts secrets). */
export function plain(v: unknown): unknown {
    if (Array.isArray(v)) return v.map(plain);
    if (v && typeof v === "object") {
        const o = v as Record<string, unknown>;
        if (o[SIG_KEY] === SECRET_SIG) return plain(o.value);
        return Object.fromEntries(Object.entries(o).map(([k, x]) => [k, plain(x)]));
    }
    return v;
}

const hasUnknown = (v: unknown): boolean => v === UNKNOWN || (Array.isArray(v) ? v.some(hasUnknown) : !!v && typeof v === "object" && Object.values(v).some(hasUnknown));

interface Kind {
    inputs: string[];
    updatable?: string[];
    check?: (i: any) => string[];
    create: (i: any) => object;
}

export const KINDS: Record<string, Record<string, Kind>> = {
    random: {
        "random:index/randomPassword:RandomPassword": {
            inputs: ["length", "special", "upper", "lower", "numeric", "minSpecial", "minUpper", "minLower", "minNumeric", "overrideSpecial", "keepers"],
            check: (i: RandomInputs) => checkRandom(i),
            create: (i: RandomInputs) => ({ result: randomString(i) }),
        },
        "random:index/randomString:RandomString": {
            inputs: ["length", "special", "upper", "lower", "numeric", "minSpecial", "minUpper", "minLower", "minNumeric", "overrideSpecial", "keepers"],
            check: (i: RandomInputs) => checkRandom(i),
            create: (i: RandomInputs) => ({ result: randomString(i) }),
        },
    },
    tls: {
        "tls:index/privateKey:PrivateKey": {
            inputs: ["algorithm", "ecdsaCurve", "rsaBits"],
            check: (i: tls.PrivateKeyInputs) => (["ECDSA", "ED25519"].includes(i.algorithm) ? [] : [`algorithm: "${i.algorithm}" not implemented by the stand-in (ECDSA, ED25519)`]),
            create: (i: tls.PrivateKeyInputs) => tls.privateKey(i),
        },
        "tls:index/selfSignedCert:SelfSignedCert": {
            inputs: ["privateKeyPem", "subject", "validityPeriodHours", "allowedUses", "isCaCertificate", "dnsNames", "ipAddresses", "uris", "setSubjectKeyId", "setAuthorityKeyId", "maxPathLength"],
            updatable: ["earlyRenewalHours"],
            check: (i: tls.SelfSignedCertInputs) => tls.checkAllowedUses(i.allowedUses),
            create: (i: tls.SelfSignedCertInputs) => tls.selfSignedCert(i),
        },
        "tls:index/certRequest:CertRequest": {
            inputs: ["privateKeyPem", "subject", "dnsNames", "ipAddresses", "uris"],
            create: (i: tls.CertRequestInputs) => tls.certRequest(i),
        },
        "tls:index/locallySignedCert:LocallySignedCert": {
            inputs: ["certRequestPem", "caPrivateKeyPem", "caCertPem", "validityPeriodHours", "allowedUses", "isCaCertificate", "setSubjectKeyId", "maxPathLength"],
            updatable: ["earlyRenewalHours"],
            check: (i: tls.LocallySignedCertInputs) => tls.checkAllowedUses(i.allowedUses),
            create: (i: tls.LocallySignedCertInputs) => tls.locallySignedCert(i),
        },
    },
};

/** The resource type of a URN (the last type of its parent chain). */
const typeOf = (urn: string) => urn.split("::")[2].split("$").pop()!;

export function standInProvider(name: "random" | "tls", version: string): Provider {
    const kinds = KINDS[name];
    const kind = (urn: string) => {
        const k = kinds[typeOf(urn)];
        if (!k) throw new Error(`stand-in ${name} provider: resource type ${typeOf(urn)} is not implemented (${Object.keys(kinds).join(", ")})`);
        return k;
    };
    return {
        version,
        async check(urn, _olds, news) {
            const k = kind(urn);
            const failures: CheckFailure[] = hasUnknown(news) || !k.check ? [] : k.check(plain(news)).map((reason) => ({ property: reason.split(":")[0], reason }));
            return { inputs: news, failures };
        },
        async diff(_id, urn, olds, news) {
            const k = kind(urn);
            const differs = (key: string) => hasUnknown(news[key]) || JSON.stringify(plain(olds[key])) !== JSON.stringify(plain(news[key]));
            const replaces = k.inputs.filter(differs);
            const updates = (k.updatable ?? []).filter(differs);
            return { changes: replaces.length + updates.length > 0, replaces, deleteBeforeReplace: false };
        },
        async create(urn, inputs) {
            const outs = kind(urn).create(plain(inputs));
            return { id: crypto.randomBytes(16).toString("hex"), outs: { ...inputs, ...outs } };
        },
        async read(id, _urn, props) {
            return { id, props };
        },
        async update(_id, _urn, olds, news) {
            return { outs: { ...olds, ...news } };
        },
        async delete() {},
    };
}

if (require.main === module) {
    const name = process.argv[2];
    if (name !== "random" && name !== "tls") {
        console.error("usage: provider.ts random|tls <engine address>");
        process.exit(2);
    }
    // The version the program's SDK asks for (package.json's pin), so the engine records what the program requested.
    const pkg = JSON.parse(fs.readFileSync(path.join(__dirname, "../../../node_modules/@pulumi", name, "package.json"), "utf8"));
    main(standInProvider(name, pkg.pulumi?.version ?? pkg.version), process.argv.slice(3));
}
