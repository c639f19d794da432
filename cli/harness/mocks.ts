/**
 * Mocks for the offline render: deterministic outputs for @pulumi/random and @pulumi/tls
 * (wrapped as secrets, since mocks do not apply additionalSecretOutputs), pass-through state
 * for everything else.
 */
import * as crypto from "crypto";
import * as pulumi from "@pulumi/pulumi";

const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";

/** A deterministic string of the right length and alphabet, derived from the resource name. */
export function deterministic(seed: string, length: number, alphabet = ALNUM): string {
    let out = "";
    let counter = 0;
    while (out.length < length) {
        const block = crypto.createHash("sha256").update(`${seed}:${counter++}`).digest();
        for (const byte of block) if (out.length < length) out += alphabet[byte % alphabet.length];
    }
    return out;
}

const fakePem = (label: string, seed: string) =>
    `-----BEGIN ${label}-----\n${deterministic(seed, 64, ALNUM + "+/")}\n-----END ${label}-----\n`;

/**
 * What the mocks answer for the stack's last outputs (the engine's readStackOutputs invoke), its state's resources and
 * for reads of cluster objects (`<type> <id>`): empty, a first deploy on an empty cluster, unless
 * a test sets them (components/lib/claimGuard.ts).
 */
export const mockDeployment: {
    lastOutputs: Record<string, unknown>;
    /** The stack's state (the engine's readStackResourceOutputs invoke): URN -> {type, outputs}. */
    lastResources: Record<string, { type: string; outputs: Record<string, unknown> }>;
    cluster: Record<string, Record<string, unknown>>;
} = { lastOutputs: {}, lastResources: {}, cluster: {} };

export const renderMocks: pulumi.runtime.Mocks = {
    newResource(args: pulumi.runtime.MockResourceArgs): { id: string; state: Record<string, unknown> } {
        if (args.id) {
            const live = mockDeployment.cluster[`${args.type} ${args.id}`];
            if (!live) throw new Error(`${args.type} ${args.id} does not exist`);
            return { id: args.id, state: live };
        }
        const id = `${args.name}-id`;
        const seed = `${args.type}:${args.name}`;
        switch (args.type) {
            case "random:index/randomPassword:RandomPassword":
            case "random:index/randomString:RandomString": {
                const length = Number(args.inputs.length ?? 16);
                const alphabet = args.inputs.special ? ALNUM + "!#$%&*()-_=+[]{}<>:?" : ALNUM;
                const result = deterministic(seed, length, alphabet);
                const isPassword = args.type.endsWith("RandomPassword");
                return { id, state: { ...args.inputs, result: isPassword ? pulumi.secret(result) : result, ...(isPassword ? { bcryptHash: pulumi.secret(`$2a$10$${deterministic(seed + "bcrypt", 53)}`) } : {}) } };
            }
            case "random:index/randomId:RandomId": {
                const bytes = Number(args.inputs.byteLength ?? 8);
                const hex = deterministic(seed, bytes * 2, "0123456789abcdef");
                return { id, state: { ...args.inputs, hex, b64Std: Buffer.from(hex, "hex").toString("base64"), b64Url: Buffer.from(hex, "hex").toString("base64url"), dec: BigInt(`0x${hex}`).toString() } };
            }
            case "random:index/randomBytes:RandomBytes": {
                const bytes = Buffer.from(deterministic(seed, Number(args.inputs.length ?? 32) * 2, "0123456789abcdef"), "hex");
                return { id, state: { ...args.inputs, base64: pulumi.secret(bytes.toString("base64")), hex: pulumi.secret(bytes.toString("hex")) } };
            }
            case "tls:index/privateKey:PrivateKey":
                return {
                    id,
                    state: {
                        ...args.inputs,
                        privateKeyPem: pulumi.secret(fakePem("PRIVATE KEY", seed)),
                        privateKeyOpenssh: pulumi.secret(fakePem("OPENSSH PRIVATE KEY", seed + "ssh")),
                        privateKeyPemPkcs8: pulumi.secret(fakePem("PRIVATE KEY", seed + "pkcs8")),
                        publicKeyPem: fakePem("PUBLIC KEY", seed + "pub"),
                        publicKeyOpenssh: `ssh-ed25519 ${deterministic(seed + "openssh", 68, ALNUM + "+/")} render\n`,
                        publicKeyFingerprintSha256: `SHA256:${deterministic(seed + "fp", 43, ALNUM + "+/")}`,
                    },
                };
            case "tls:index/selfSignedCert:SelfSignedCert":
            case "tls:index/locallySignedCert:LocallySignedCert":
                return { id, state: { ...args.inputs, certPem: fakePem("CERTIFICATE", seed) } };
            case "tls:index/certRequest:CertRequest":
                return { id, state: { ...args.inputs, certRequestPem: fakePem("CERTIFICATE REQUEST", seed) } };
            default:
                return { id, state: args.inputs };
        }
    },
    call(args: pulumi.runtime.MockCallArgs): Record<string, unknown> {
        if (args.token === "pulumi:pulumi:readStackOutputs") return { name: args.inputs.name, outputs: mockDeployment.lastOutputs };
        if (args.token === "pulumi:pulumi:readStackResourceOutputs") return { name: args.inputs.stackName, outputs: mockDeployment.lastResources };
        return args.inputs;
    },
};
