/**
 * Reads Pulumi.<stack>.yaml for the offline render, each value as the pulumi CLI reads it and
 * hands it to the program (./cliValues.ts). Values stored as `secure:` cannot be decrypted
 * without the CLI, and secrets are never committed: every secret key of the schema gets its
 * placeholder (a value of the right shape), marked secret, and the render says so.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { flatten, schema } from "../../config/schemaIndex";
import { projectDeclarations } from "../../config/projectDeclarations";
import { cliTypeAccepts, cliValue } from "./cliValues";
import { RENDER_DIGEST_MODE_KEY } from "../../config/imageLock";
import { listStacks, REPO_ROOT } from "../../config/stacks";

export interface StackValues {
    project: string;
    stack: string;
    config: Record<string, string>;
    secretKeys: string[];
    placeholders: string[];
}

export { listStacks, REPO_ROOT };

export function projectName(root = REPO_ROOT): string {
    const project = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8"));
    return project.name as string;
}

/** The settings a stack file may hold (the pulumi CLI's ProjectStack: config, secrets provider, ESC environments). */
export const STACK_FILE_SETTINGS = ["config", "secretsprovider", "encryptedkey", "encryptionsalt", "environment"] as const;

export class StackFileError extends Error {
    constructor(readonly file: string, readonly problems: string[]) {
        super(`${file}: ${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was rendered\n${problems.map((p) => `  - ${p}`).join("\n")}`);
        this.name = "StackFileError";
    }
}

/**
 * Config namespaces a stack may set besides the project's own: `pulumi:` and those of the
 * providers the program depends on (package.json's @pulumi/<provider> packages).
 */
export function providerNamespaces(root = REPO_ROOT): string[] {
    const pkg = JSON.parse(fs.readFileSync(path.join(root, "package.json"), "utf8"));
    const providers = Object.keys({ ...pkg.dependencies }).map((d) => /^@pulumi\/(.+)$/.exec(d)?.[1]).filter((p): p is string => !!p && p !== "pulumi" && p !== "policy");
    return ["pulumi", ...providers].sort();
}

/** A stack-file value as the program receives it: text (JSON when `object`), or an encrypted value. */
export type StackValue = { text: string; object: boolean } | { ciphertext: string };

/** A key Pulumi.yaml declares: its type, as `pulumi preview` checks stack values against it. */
export interface DeclaredKey {
    /** Undefined: the key is not declared in Pulumi.yaml, and the CLI checks no type. */
    type?: "string" | "integer" | "boolean" | "array";
    items?: "string" | "integer";
    secret: boolean;
}

/** The keys Pulumi.yaml declares (config/projectDeclarations.ts), namespaced, plus the schema's secret keys (declared or optional). */
export function declaredKeys(project: string): Map<string, DeclaredKey> {
    const out = new Map<string, DeclaredKey>([...projectDeclarations()].map(([key, d]) => [`${project}:${key}`, { type: d.type, items: d.items, secret: d.secret }]));
    // An optional secret without a default is not declared, yet the render must not take it in plain text.
    for (const { key, field } of flatten(schema)) if (field.secret && !out.has(`${project}:${key}`)) out.set(`${project}:${key}`, { secret: true });
    return out;
}

/** Ciphertexts of the pulumi secrets providers: the passphrase provider's "v1:<nonce>:<data>" (sdk/go/common/resource/config/crypt.go), or a cloud/KMS provider's base64. */
const PASSPHRASE_CIPHERTEXT = /^v1:[A-Za-z0-9+/]{16}:(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const BASE64_CIPHERTEXT = /^(?:[A-Za-z0-9+/]{4})+(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * Parses a stack file and checks its shape: YAML errors with their line, an empty file, settings
 * the CLI does not know (a misspelt `config:`), a `config:` that is not a map, keys of other
 * namespaces than the project's and its providers', secret keys given in plain text, encrypted
 * values on keys that are not secrets or that are not ciphertexts, keys without a value, and
 * values that `pulumi preview` refuses for the type Pulumi.yaml declares.
 */
export function parseStackFile(text: string, file: string, project: string, declared: Map<string, DeclaredKey>, namespaces: string[]): Record<string, StackValue> {
    const doc = YAML.parseDocument(text, { prettyErrors: true });
    if (doc.errors.length > 0) throw new StackFileError(file, doc.errors.map((e) => `line ${e.linePos?.[0].line ?? "?"}, column ${e.linePos?.[0].col ?? "?"}: ${e.message.split("\n")[0].replace(/ at line \d+, column \d+:?$/, "")}`));
    const lineOf = (node: unknown) => {
        const range = (node as { range?: [number] } | undefined)?.range;
        return range ? `line ${text.slice(0, range[0]).split("\n").length}: ` : "";
    };
    const top = doc.contents;
    if (top === null || (YAML.isScalar(top) && (top.value === null || top.value === ""))) throw new StackFileError(file, ["the file is empty; expected a `config:` map of the stack's settings (as the committed stack files have)"]);
    if (!YAML.isMap(top)) throw new StackFileError(file, [`${lineOf(top)}expected a map with a \`config:\` section, got ${YAML.isSeq(top) ? "a list" : `"${String(top)}"`}`]);
    const problems: string[] = [];
    for (const item of top.items) {
        const key = String(YAML.isScalar(item.key) ? item.key.value : item.key);
        if (!(STACK_FILE_SETTINGS as readonly string[]).includes(key)) {
            const close = STACK_FILE_SETTINGS.find((s) => s.startsWith(key.slice(0, 3).toLowerCase()) || key.toLowerCase().startsWith(s.slice(0, 3)));
            problems.push(`${lineOf(item.key)}\`${key}\` is not a stack file setting${close ? ` (did you mean \`${close}\`?)` : ""}; expected one of ${STACK_FILE_SETTINGS.join(", ")}`);
        }
    }
    // Pulumi ESC environments (pulumi 3.259.0 cmd/pulumi/config/io.go openStackEnv): any definition
    // but an empty list or null makes the CLI open it, and a file backend refuses that ("backend ...
    // does not support environments"); the offline render cannot read one either.
    const environment = top.get("environment", true);
    const emptyEnvironment = environment === undefined || environment === null || (YAML.isScalar(environment) && environment.value === null) || (YAML.isSeq(environment) && environment.items.length === 0);
    if (!emptyEnvironment)
        problems.push(`${lineOf(environment)}\`environment:\` imports Pulumi ESC environments: the pulumi CLI on a file backend refuses the stack ("does not support environments; Pulumi ESC environments require the Pulumi Cloud backend"), and the offline render cannot read them; set the values under \`config:\` instead (secrets with pulumi config set --secret <key> -s ${path.basename(file).replace(/^Pulumi\.|\.yaml$/g, "")})`);
    const passphrase = top.has("encryptionsalt");
    const stackName = path.basename(file).replace(/^Pulumi\.|\.yaml$/g, "");
    const configNode = top.get("config", true);
    const values: Record<string, StackValue> = {};
    if (configNode === undefined || configNode === null || (YAML.isScalar(configNode) && configNode.value === null)) {
        problems.push("there is no `config:` map: a stack without settings would render with the defaults of every key; set at least ops:environmentTier");
    } else if (!YAML.isMap(configNode)) {
        problems.push(`${lineOf(configNode)}\`config:\` must be a map of \`${project}:<key>: <value>\`, got ${YAML.isSeq(configNode) ? "a list" : JSON.stringify(String((configNode as YAML.Scalar).value ?? configNode))}`);
    } else {
        const seen = new Map<string, { key: string; line: string }>();
        for (const item of configNode.items) {
            const key = String(YAML.isScalar(item.key) ? item.key.value : item.key);
            const namespace = key.includes(":") ? key.slice(0, key.indexOf(":")) : project;
            const full = key.includes(":") ? key : `${project}:${key}`;
            const at = `${lineOf(item.key)}\`${key}\``;
            // The CLI puts the project's namespace on a bare key; both spellings: one wins at random (a Go map).
            const other = seen.get(full);
            if (other) {
                problems.push(`${at} is also given as \`${other.key}\` (${other.line.replace(/: $/, "")}); keep one of them`);
                continue;
            }
            seen.set(full, { key, line: lineOf(item.key) });
            if (namespace !== project && !namespaces.includes(namespace)) {
                problems.push(`${at} is in the namespace "${namespace}", which nothing in this program reads; expected \`${project}:<key>\` (or a provider's: ${namespaces.join(", ")})`);
                continue;
            }
            const decl = namespace === project ? declared.get(full) : undefined;
            const v = cliValue(item.value);
            if (!v.ok) {
                problems.push(`${at} ${/^(has|is) /.test(v.problem) ? v.problem : `cannot be read: ${v.problem}`}`);
                continue;
            }
            if (v.secure) {
                if (namespace === project && !decl?.secret)
                    problems.push(`${at} is stored encrypted but is not a secret of this project: the offline render cannot decrypt it and would render the default; store it in plain text (pulumi config set ${full.slice(project.length + 1)} <value> -s ${stackName})`);
                else if (!(passphrase ? PASSPHRASE_CIPHERTEXT : new RegExp(`${PASSPHRASE_CIPHERTEXT.source}|${BASE64_CIPHERTEXT.source}`)).test(v.ciphertext))
                    problems.push(`${at} has a \`secure:\` value that is not a ciphertext of a pulumi secrets provider (expected ${passphrase ? '"v1:<nonce>:<data>" of the passphrase provider, as this file has an encryptionsalt' : '"v1:<nonce>:<data>" or base64'}); set it again with pulumi config set --secret ${full.slice(project.length + 1)} -s ${stackName}`);
                else values[full] = { ciphertext: v.ciphertext };
                continue;
            }
            if (item.value === null || (YAML.isScalar(item.value) && item.value.type === "PLAIN" && !item.value.tag && /^(|~|null|Null|NULL)$/.test(String(item.value.source ?? "")))) {
                problems.push(`${at} has no value (the pulumi CLI would hand the program an empty string); give a value, or remove the line to use the default`);
                continue;
            }
            if (decl?.secret) {
                problems.push(`${at} is a secret and is given in plain text; remove the line and store it encrypted: pulumi config set --secret ${full.slice(project.length + 1)} -s ${stackName}`);
                continue;
            }
            if (decl?.type && !cliTypeAccepts(decl.type, decl.items, v)) {
                const shown = v.text.length > 40 ? `${v.text.slice(0, 37)}...` : v.text;
                problems.push(`${at} is read by the pulumi CLI as ${v.object ? "the JSON" : "the text"} ${JSON.stringify(shown)}, which \`pulumi preview\` refuses: it must be of type ${decl.type === "array" ? `array<${decl.items}>` : decl.type} (Pulumi.yaml)${decl.type === "array" ? "; write a YAML list, unquoted" : ""}`);
                continue;
            }
            values[full] = { text: v.text, object: v.object };
        }
    }
    if (problems.length > 0) throw new StackFileError(file, problems);
    return values;
}

export function readStackValues(stack: string, overrides: Record<string, unknown> = {}, root = REPO_ROOT): StackValues {
    const project = projectName(root);
    const file = path.join(root, `Pulumi.${stack}.yaml`);
    if (!fs.existsSync(file)) throw new Error(`no stack file ${path.relative(root, file)}: stacks are ${listStacks(root).join(", ")}`);
    const stackConfig = parseStackFile(fs.readFileSync(file, "utf8"), path.relative(root, file), project, declaredKeys(project), providerNamespaces(root));
    const config: Record<string, string> = {};
    const encrypted = new Set<string>();
    for (const [k, v] of Object.entries(stackConfig)) {
        if ("ciphertext" in v) encrypted.add(k);
        else config[k] = v.text;
    }
    // Test overrides: a string as it is, anything else as its JSON (undefined removes the key).
    for (const [k, v] of Object.entries(overrides)) {
        const full = k.includes(":") ? k : `${project}:${k}`;
        encrypted.delete(full);
        if (v === undefined) delete config[full];
        else if (isSecure(v)) encrypted.add(full);
        else config[full] = typeof v === "string" ? v : JSON.stringify(v);
    }

    const secretKeys: string[] = [];
    const placeholders: string[] = [];
    for (const { key, field } of flatten(schema)) {
        if (!field.secret) continue;
        const full = `${project}:${key}`;
        secretKeys.push(full);
        if (config[full] === undefined && field.placeholder && (!field.optional || encrypted.has(full))) {
            config[full] = field.placeholder;
            placeholders.push(key);
        }
    }
    // Offline, a prod tag that images.lock.json does not record runs as the placeholder digest (config/imageLock.ts).
    config[RENDER_DIGEST_MODE_KEY] = "placeholder";
    return { project, stack, config, secretKeys, placeholders };
}

const isSecure = (v: unknown) => typeof v === "object" && v !== null && "secure" in (v as object);

