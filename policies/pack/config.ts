/**
 * The policy pack config of a stack (policies/config/<stack>.json, what
 * `pulumi preview --policy-pack-config` is given), checked before anything is evaluated:
 *   - every key names a policy of the pack (or is "all", the CLI's key for every policy);
 *   - a value is an enforcement level, or an object with an optional enforcementLevel and the
 *     policy's settings, each checked against the policy's configSchema (type, enum, minimum,
 *     maximum, items, properties, required); a setting the schema does not declare is an error,
 *     so that a typo does not silently leave a check at its default;
 *   - each Gatekeeper policy's constraint file exists, parses and every constraint's parameters
 *     satisfy its template's schema (the file is loaded as the policy will load it).
 * Errors name the config file and the item, e.g.
 *   policies/config/prod.json: images-pinned-by-digest.tier must be one of "dev", "prod", got "Prod"
 */
import * as fs from "fs";
import * as path from "path";
import type { PolicyConfigSchema, PolicyPackConfig, StackValidationPolicy } from "@pulumi/policy";
import { ENFORCEMENT_ACTIONS } from "../gatekeeper/engine/constraints";
import { auditLogProblem, evaluatorFor } from "./gatekeeper";
import { TeamTemplateError } from "../gatekeeper/wasm/rule";
import { PACK_DIR, resolveInPack } from "./paths";

export const ENFORCEMENT_LEVELS = ["advisory", "mandatory", "remediate", "disabled"] as const;

export class PackConfigError extends Error {
    override name = "PackConfigError";
}

type JsonSchema = Record<string, any>;

const describe = (v: unknown) => (Array.isArray(v) ? "a list" : v === null ? "null" : typeof v);
const show = (v: unknown) => {
    const s = JSON.stringify(v) ?? String(v);
    return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

function checkValue(schema: JsonSchema, value: unknown, at: string, problems: string[]): void {
    if (Array.isArray(schema.enum) && !schema.enum.some((e: unknown) => e === value)) {
        problems.push(`${at} must be one of ${schema.enum.map((e: unknown) => JSON.stringify(e)).join(", ")}, got ${show(value)}`);
        return;
    }
    const type = schema.type;
    const expect = (ok: boolean, what: string) => {
        if (!ok) problems.push(`${at} must be ${what}, got ${describe(value)} ${show(value)}`);
        return ok;
    };
    switch (type) {
        case "string":
            expect(typeof value === "string", "a string");
            return;
        case "boolean":
            expect(typeof value === "boolean", "true or false");
            return;
        case "integer":
        case "number":
            if (!expect(typeof value === "number" && Number.isFinite(value) && (type === "number" || Number.isInteger(value)), type === "integer" ? "an integer" : "a number")) return;
            if (typeof schema.minimum === "number" && (value as number) < schema.minimum) problems.push(`${at} must be at least ${schema.minimum}, got ${value}`);
            if (typeof schema.maximum === "number" && (value as number) > schema.maximum) problems.push(`${at} must be at most ${schema.maximum}, got ${value}`);
            return;
        case "array":
            if (!expect(Array.isArray(value), "a list")) return;
            if (schema.items && typeof schema.items === "object") (value as unknown[]).forEach((v, i) => checkValue(schema.items, v, `${at}[${i}]`, problems));
            return;
        case "object":
            if (!expect(typeof value === "object" && value !== null && !Array.isArray(value), "an object")) return;
            checkProperties(schema, value as Record<string, unknown>, at, problems);
            return;
        default:
            return;
    }
}

function checkProperties(schema: JsonSchema, value: Record<string, unknown>, at: string, problems: string[]): void {
    const properties: Record<string, JsonSchema> = schema.properties ?? {};
    for (const [key, v] of Object.entries(value)) {
        const sub = properties[key];
        if (sub) checkValue(sub, v, `${at}.${key}`, problems);
        else if (schema.additionalProperties && typeof schema.additionalProperties === "object") checkValue(schema.additionalProperties, v, `${at}.${key}`, problems);
        else if (schema.additionalProperties !== true) {
            const known = Object.keys(properties);
            problems.push(`${at}.${key} is not a setting of this policy (${known.length ? `known: ${known.join(", ")}` : "it takes none"})`);
        }
    }
    for (const key of schema.required ?? []) if (value[key] === undefined) problems.push(`${at}.${key} is required`);
}

/** The problems of one policy's entry. */
function entryProblems(policy: StackValidationPolicy | undefined, name: string, entry: unknown): string[] {
    const problems: string[] = [];
    const levelProblem = (level: unknown, at: string) => {
        if (!(ENFORCEMENT_LEVELS as readonly unknown[]).includes(level)) problems.push(`${at} must be one of ${ENFORCEMENT_LEVELS.join(", ")}, got ${show(level)}`);
    };
    if (typeof entry === "string") {
        levelProblem(entry, name);
        return problems;
    }
    if (typeof entry !== "object" || entry === null || Array.isArray(entry)) {
        problems.push(`${name} must be an enforcement level or an object of settings, got ${describe(entry)} ${show(entry)}`);
        return problems;
    }
    const { enforcementLevel, ...settings } = entry as Record<string, unknown>;
    if (enforcementLevel !== undefined) levelProblem(enforcementLevel, `${name}.enforcementLevel`);
    if (!policy) return problems; // "all": only the level applies to every policy
    const schema: PolicyConfigSchema = policy.configSchema ?? { properties: {} };
    checkProperties({ properties: schema.properties, required: schema.required }, settings, name, problems);
    return problems;
}

/**
 * Checks a parsed pack config against the pack's policies; throws PackConfigError listing every
 * problem, each prefixed with `file`. Gatekeeper constraint files are loaded (and cached) too.
 */
export function validatePackConfig(config: unknown, file: string, policies: readonly StackValidationPolicy[]): PolicyPackConfig {
    if (typeof config !== "object" || config === null || Array.isArray(config)) {
        throw new PackConfigError(`${file}: expected an object of policy name -> settings, got ${describe(config)}`);
    }
    const byName = new Map(policies.map((p) => [p.name, p]));
    const problems: string[] = [];
    for (const [name, entry] of Object.entries(config)) {
        const policy = byName.get(name);
        if (!policy && name !== "all") {
            problems.push(`unknown policy ${JSON.stringify(name)} (the pack's policies: ${[...byName.keys()].join(", ")})`);
            continue;
        }
        problems.push(...entryProblems(policy, name, entry));
    }
    if (problems.length === 0) {
        for (const action of ENFORCEMENT_ACTIONS) {
            const name = `gatekeeper-${action}`;
            if (!byName.has(name)) continue;
            const entry = (config as Record<string, unknown>)[name] as { constraints?: string; enforcementLevel?: string } | undefined;
            const all = (config as Record<string, unknown>).all;
            const allLevel = typeof all === "string" ? all : (all as { enforcementLevel?: string } | undefined)?.enforcementLevel;
            if (!entry) {
                if (allLevel !== "disabled") problems.push(`${name}: no entry; the policy needs its constraint file ({"constraints": "constraints/<stack>.yaml"}) or "disabled"`);
                continue;
            }
            if (typeof entry !== "object" || entry.enforcementLevel === "disabled") continue;
            const auditLog = (entry as { auditLog?: unknown }).auditLog;
            if (auditLog !== undefined && auditLogProblem(auditLog)) problems.push(`${name}.auditLog: ${auditLogProblem(auditLog)}`);
            const constraints = entry.constraints as string;
            const target = path.resolve(PACK_DIR, constraints);
            if (!fs.existsSync(target)) {
                problems.push(`${name}.constraints: no such file ${path.relative(process.cwd(), target)}`);
                continue;
            }
            try {
                evaluatorFor(constraints, action);
            } catch (err) {
                // The team's templates are at fault, not this config: said as they are.
                if (err instanceof TeamTemplateError) throw err;
                problems.push(`${name}.constraints: ${(err as Error).message}`);
            }
        }
    }
    if (problems.length > 0) throw new PackConfigError(problems.map((p) => `${file}: ${p}`).join("\n"));
    return config as PolicyPackConfig;
}

/** The checked pack config of a stack: policies/config/<stack>.json. */
export function readPackConfig(stack: string, policies: readonly StackValidationPolicy[]): PolicyPackConfig {
    const file = resolveInPack(`config/${stack}.json`);
    const shown = path.relative(process.cwd(), file) || file;
    if (!fs.existsSync(file)) throw new PackConfigError(`no policy pack config for stack ${stack}: expected ${shown}`);
    let parsed: unknown;
    try {
        parsed = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (err) {
        throw new PackConfigError(`${shown}: not valid JSON: ${(err as Error).message}`);
    }
    return validatePackConfig(parsed, shown, policies);
}
