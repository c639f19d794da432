/**
 * Reads Pulumi.<stack>.yaml for the offline render. Values stored as `secure:` cannot be
 * decrypted without the CLI, and secrets are never committed: every secret key of the schema
 * gets its placeholder (a value of the right shape), marked secret, and the render says so.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { flatten, schema } from "../../config/schemaIndex";
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

/**
 * Parses a stack file and checks its shape: YAML errors with their line, an empty file, settings
 * the CLI does not know (a misspelt `config:`), a `config:` that is not a map, keys of other
 * namespaces than the project's and its providers', and secret keys given in plain text.
 */
export function parseStackFile(text: string, file: string, project: string, secretKeys: string[], namespaces: string[]): Record<string, unknown> {
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
    const configNode = top.get("config", true);
    const data = (doc.toJS() ?? {}) as Record<string, unknown>;
    if (configNode === undefined || configNode === null || (YAML.isScalar(configNode) && configNode.value === null)) {
        problems.push("there is no `config:` map: a stack without settings would render with the defaults of every key; set at least ops:environmentTier");
    } else if (!YAML.isMap(configNode)) {
        problems.push(`${lineOf(configNode)}\`config:\` must be a map of \`${project}:<key>: <value>\`, got ${YAML.isSeq(configNode) ? "a list" : JSON.stringify(String((configNode as YAML.Scalar).value ?? configNode))}`);
    } else {
        for (const item of configNode.items) {
            const key = String(YAML.isScalar(item.key) ? item.key.value : item.key);
            const namespace = key.includes(":") ? key.slice(0, key.indexOf(":")) : project;
            const full = key.includes(":") ? key : `${project}:${key}`;
            if (namespace !== project && !namespaces.includes(namespace))
                problems.push(`${lineOf(item.key)}\`${key}\` is in the namespace "${namespace}", which nothing in this program reads; expected \`${project}:<key>\` (or a provider's: ${namespaces.join(", ")})`);
            else if (secretKeys.includes(full) && item.value !== null && !isSecure((item.value as YAML.Node).toJSON?.() ?? item.value))
                problems.push(`${lineOf(item.key)}\`${key}\` is a secret and is given in plain text; remove the line and store it encrypted: pulumi config set --secret ${full.slice(project.length + 1)} -s ${path.basename(file).replace(/^Pulumi\.|\.yaml$/g, "")}`);
        }
    }
    if (problems.length > 0) throw new StackFileError(file, problems);
    return (data.config ?? {}) as Record<string, unknown>;
}

export function readStackValues(stack: string, overrides: Record<string, unknown> = {}, root = REPO_ROOT): StackValues {
    const project = projectName(root);
    const file = path.join(root, `Pulumi.${stack}.yaml`);
    if (!fs.existsSync(file)) throw new Error(`no stack file ${path.relative(root, file)}: stacks are ${listStacks(root).join(", ")}`);
    const schemaSecrets = flatten(schema).filter(({ field }) => field.secret).map(({ key }) => `${project}:${key}`);
    const stackConfig = parseStackFile(fs.readFileSync(file, "utf8"), path.relative(root, file), project, schemaSecrets, providerNamespaces(root));
    const raw: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(stackConfig)) raw[k.includes(":") ? k : `${project}:${k}`] = v;
    for (const [k, v] of Object.entries(overrides)) raw[k.includes(":") ? k : `${project}:${k}`] = v;

    const config: Record<string, string> = {};
    const secretKeys: string[] = [];
    const placeholders: string[] = [];
    for (const [key, value] of Object.entries(raw)) {
        if (value === undefined) continue;
        if (isSecure(value)) continue; // filled below from the placeholder
        config[key] = typeof value === "string" ? value : JSON.stringify(value);
    }
    for (const { key, field } of flatten(schema)) {
        if (!field.secret) continue;
        const full = `${project}:${key}`;
        secretKeys.push(full);
        if (config[full] === undefined && field.placeholder && (!field.optional || isSecure(raw[full]))) {
            config[full] = field.placeholder;
            placeholders.push(key);
        }
    }
    // Offline, a prod tag that images.lock.json does not record runs as the placeholder digest (config/imageLock.ts).
    config[RENDER_DIGEST_MODE_KEY] = "placeholder";
    return { project, stack, config, secretKeys, placeholders };
}

const isSecure = (v: unknown) => typeof v === "object" && v !== null && "secure" in (v as object);

