/**
 * Reads Pulumi.<stack>.yaml for the offline render. Values stored as `secure:` cannot be
 * decrypted without the CLI, and secrets are never committed: every secret key of the schema
 * gets its placeholder (a value of the right shape), marked secret, and the render says so.
 */
import * as fs from "fs";
import * as path from "path";
import * as YAML from "yaml";
import { flatten, schema } from "../../config/schemaIndex";

export interface StackValues {
    project: string;
    stack: string;
    config: Record<string, string>;
    secretKeys: string[];
    placeholders: string[];
}

export const REPO_ROOT = path.resolve(__dirname, "..", "..");

export function projectName(root = REPO_ROOT): string {
    const project = YAML.parse(fs.readFileSync(path.join(root, "Pulumi.yaml"), "utf8"));
    return project.name as string;
}

export function readStackValues(stack: string, overrides: Record<string, unknown> = {}, root = REPO_ROOT): StackValues {
    const project = projectName(root);
    const file = path.join(root, `Pulumi.${stack}.yaml`);
    if (!fs.existsSync(file)) throw new Error(`no stack file ${path.relative(root, file)}: stacks are ${listStacks(root).join(", ")}`);
    const doc = YAML.parse(fs.readFileSync(file, "utf8")) ?? {};
    const raw: Record<string, unknown> = { ...(doc.config ?? {}) };
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
    return { project, stack, config, secretKeys, placeholders };
}

const isSecure = (v: unknown) => typeof v === "object" && v !== null && "secure" in (v as object);

export function listStacks(root = REPO_ROOT): string[] {
    return fs.readdirSync(root).map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1]).filter((s): s is string => !!s).sort();
}
