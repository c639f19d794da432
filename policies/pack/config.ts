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
import * as YAML from "yaml";
import { ENFORCEMENT_ACTIONS, parseConstraintObjects } from "../gatekeeper/engine/constraints";
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
                problems.push(...everyNamespaceExcluded(target).map((p) => `${name}.constraints: ${p}`));
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

/**
 * A Gatekeeper Config whose excludedNamespaces match every namespace ("*") for the webhook or
 * audit: the pack would judge no namespaced object at preview, while the admission policies made
 * from the same file (policies/admission) still enforce, so preview and cluster disagree; and every
 * constraint is off without a word, as with an empty constraint set (which is refused too).
 */
function everyNamespaceExcluded(file: string): string[] {
    const objects = parseConstraintObjects(fs.readFileSync(file, "utf8"), path.relative(PACK_DIR, file)) as Array<{ kind?: string; apiVersion?: string; spec?: { match?: Array<{ excludedNamespaces?: unknown[]; processes?: unknown[] }> } }>;
    const out: string[] = [];
    for (const o of objects) {
        if (o?.kind !== "Config" || !String(o.apiVersion ?? "").startsWith("config.gatekeeper.sh/")) continue;
        (o.spec?.match ?? []).forEach((entry, i) => {
            const all = (entry?.excludedNamespaces ?? []).filter((n) => typeof n === "string" && n.replace(/\*/g, "") === "");
            const processes = (entry?.processes ?? []).filter((p) => p === "*" || p === "webhook" || p === "audit");
            if (all.length && processes.length)
                out.push(`the Config's spec.match[${i}].excludedNamespaces has ${JSON.stringify(all[0])}, which excludes every namespace from ${processes.join(", ")}: every namespaced constraint would be off at preview while the admission policies made from this file still enforce; expected the namespaces to exclude by name or prefix (kube-*), or the gatekeeper-<action> policies set to "disabled" in the pack config, where a reviewer sees it`);
        });
    }
    return out;
}

/** Keys given twice in one object of a JSON text (JSON.parse keeps the last one without a word), with their line. */
function duplicateKeys(text: string): string[] {
    const doc = YAML.parseDocument(text, { uniqueKeys: true, prettyErrors: true });
    return doc.errors
        .filter((e) => e.code === "DUPLICATE_KEY")
        .map((e) => `line ${e.linePos?.[0].line ?? "?"}: the key ${/^"(?:[^"\\]|\\.)*"/.exec(text.slice(e.pos[0]))?.[0] ?? "(?)"} is given twice in one object (JSON keeps the last one without a word); give each policy and setting once`);
}

/** The checked pack config of a stack: policies/config/<stack>.json. */
export function readPackConfig(stack: string, policies: readonly StackValidationPolicy[]): PolicyPackConfig {
    const file = resolveInPack(`config/${stack}.json`);
    const shown = path.relative(process.cwd(), file) || file;
    if (!fs.existsSync(file)) throw new PackConfigError(`no policy pack config for stack ${stack}: expected ${shown}`);
    return readPackConfigFile(file, shown, policies);
}

/** A pack config file, parsed (no key twice) and checked; `shown` names it in errors. */
export function readPackConfigFile(file: string, shown: string, policies: readonly StackValidationPolicy[]): PolicyPackConfig {
    let parsed: unknown;
    const text = fs.readFileSync(file, "utf8");
    try {
        parsed = JSON.parse(text);
    } catch (err) {
        throw new PackConfigError(`${shown}: not valid JSON: ${(err as Error).message}`);
    }
    const twice = duplicateKeys(text);
    if (twice.length) throw new PackConfigError(twice.map((p) => `${shown}: ${p}`).join("\n"));
    return validatePackConfig(parsed, shown, policies);
}
