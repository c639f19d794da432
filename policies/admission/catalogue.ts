/**
 * The stack's rule catalogue for admission: the constraints the pack evaluates for that stack
 * (policies/config/<stack>.json names, per enforcement action, the constraint file), and the
 * namespaces the file's Gatekeeper Config excludes from the webhook.
 */
import * as fs from "fs";
import * as path from "path";
import { constraintSetFromObjects, parseConstraintObjects, requireConstraints, type Constraint, type EnforcementAction } from "../gatekeeper/engine";
import { PACK_DIR } from "../pack/paths";
import { packTemplateRegistry } from "../pack/templates";
import { defaultsOf } from "../pack/rule";
import { specRules } from "../pack/policies";
import { generateAdmissionPolicies, generateSpecAdmissionPolicies, type AdmissionObjects, type GenerateOptions, type SpecRuleSetting } from "./generate";
import { specAdmissionRules } from "./spec";

export interface Catalogue {
    constraints: Constraint[];
    /** Namespaces excluded by the Config of the constraint files (processes "*" or "webhook"). */
    excludedNamespaces: string[];
    /** The constraint files read, relative to the pack directory. */
    files: string[];
}

const ACTIONS: readonly EnforcementAction[] = ["deny", "warn", "dryrun"];
const WEBHOOK_PROCESSES = new Set(["*", "webhook"]);

/** Constraint file per action from the stack's pack config; the tier's file when the stack has no pack config. */
export function constraintFiles(stack: string, tier: string): Record<EnforcementAction, string> {
    const configFile = path.resolve(PACK_DIR, "config", `${stack}.json`);
    if (!fs.existsSync(configFile)) {
        const file = `constraints/${tier}.yaml`;
        return { deny: file, warn: file, dryrun: file };
    }
    let config: Record<string, { constraints?: unknown }>;
    try {
        config = JSON.parse(fs.readFileSync(configFile, "utf8"));
    } catch (err) {
        throw new Error(`${path.relative(process.cwd(), configFile)}: not valid JSON (${(err as Error).message})`);
    }
    const out = {} as Record<EnforcementAction, string>;
    for (const action of ACTIONS) {
        const file = config[`gatekeeper-${action}`]?.constraints;
        if (typeof file !== "string" || file === "") {
            throw new Error(`${path.relative(process.cwd(), configFile)}: gatekeeper-${action}.constraints must name the constraint file (e.g. "constraints/${tier}.yaml")`);
        }
        out[action] = file;
    }
    return out;
}

/** Each action's constraints from its file (as the pack's gatekeeper-<action> policy evaluates them). */
export function loadCatalogue(files: Record<EnforcementAction, string>): Catalogue {
    const constraints: Constraint[] = [];
    const excluded = new Set<string>();
    // The actions usually share one file: read and check each file once.
    const loaded = new Map<string, { set: ReturnType<typeof constraintSetFromObjects>; exclusions: string[] }>();
    for (const action of ACTIONS) {
        const file = path.resolve(PACK_DIR, files[action]);
        if (!loaded.has(file)) {
            if (!fs.existsSync(file))
                throw new Error(`the constraint file ${path.relative(process.cwd(), file)} (gatekeeper-${action}.constraints, relative to policies/) does not exist; expected one of policies/constraints/*.yaml`);
            const source = path.relative(PACK_DIR, file);
            const objects = parseConstraintObjects(fs.readFileSync(file, "utf8"), source);
            loaded.set(file, { set: requireConstraints(constraintSetFromObjects(objects, packTemplateRegistry(), source), source), exclusions: webhookExclusions(objects) });
        }
        const { set, exclusions } = loaded.get(file)!;
        constraints.push(...set.constraints.filter((c) => c.enforcementAction === action));
        for (const ns of exclusions) excluded.add(ns);
    }
    return { constraints, excludedNamespaces: [...excluded].sort(), files: [...new Set(Object.values(files))] };
}

/** excludedNamespaces of the Config entries whose processes include the webhook (loadConstraintSet has checked the Config). */
function webhookExclusions(objects: readonly unknown[]): string[] {
    const out: string[] = [];
    for (const value of objects) {
        const obj = value as { apiVersion?: string; kind?: string; spec?: { match?: Array<{ excludedNamespaces?: string[]; processes?: string[] }> } } | null;
        if (!obj || obj.kind !== "Config" || !String(obj.apiVersion ?? "").startsWith("config.gatekeeper.sh/")) continue;
        for (const entry of obj.spec?.match ?? []) {
            if ((entry.processes ?? []).some((p) => WEBHOOK_PROCESSES.has(p))) out.push(...(entry.excludedNamespaces ?? []));
        }
    }
    return out;
}

/** The stack's pack config (policies/config/<stack>.json), or undefined when the stack has none. */
function packConfig(stack: string): Record<string, Record<string, unknown>> | undefined {
    const file = path.resolve(PACK_DIR, "config", `${stack}.json`);
    return fs.existsSync(file) ? JSON.parse(fs.readFileSync(file, "utf8")) : undefined;
}

/**
 * The settings of the single-object spec rules: the pack config over each rule's defaults; a
 * stack without a pack config gets the defaults with its own tier.
 */
export function specSettings(stack: string, tier: string): SpecRuleSetting[] {
    const config = packConfig(stack);
    return specRules
        .filter((r) => specAdmissionRules.has(r.name))
        .map((r) => {
            const own = { ...(config?.[r.name] ?? (r.configSchema?.properties?.tier ? { tier } : {})) };
            const enforcementLevel = String(own.enforcementLevel ?? r.enforcementLevel ?? "mandatory");
            delete own.enforcementLevel;
            return { rule: specAdmissionRules.get(r.name)!, enforcementLevel, config: { ...defaultsOf(r.configSchema), ...own } };
        });
}

/** The admission objects of a stack: its Gatekeeper constraints, then the specification's single-object rules. */
export function stackAdmissionPolicies(stack: string, tier: string, opts: Omit<GenerateOptions, "excludedNamespaces"> = {}): AdmissionObjects & { catalogue: Catalogue; spec: AdmissionObjects } {
    const catalogue = loadCatalogue(constraintFiles(stack, tier));
    const generateOpts = { ...opts, excludedNamespaces: catalogue.excludedNamespaces };
    const gatekeeper = generateAdmissionPolicies(catalogue.constraints, generateOpts);
    const spec = generateSpecAdmissionPolicies(specSettings(stack, tier), generateOpts);
    return {
        policies: [...gatekeeper.policies, ...spec.policies],
        bindings: [...gatekeeper.bindings, ...spec.bindings],
        skipped: gatekeeper.skipped,
        catalogue,
        spec,
    };
}
