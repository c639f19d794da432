import { isScalar, parseAllDocuments, visit, type Document } from "yaml";
import type { TemplateRule } from "../types";
import { compileMatch, type CompiledMatch, type Match } from "./match";
import { enforceabilityProblems, namespaceEntryProblem } from "./enforceable";
import { validateParameters } from "./parameter-schema";
import { compileWildcardList } from "./wildcard";

export type EnforcementAction = "deny" | "warn" | "dryrun";
export const ENFORCEMENT_ACTIONS: readonly EnforcementAction[] = ["deny", "warn", "dryrun"];

/** Templates by constraint kind (e.g. "K8sAllowedRepos"). */
export type TemplateRegistry = ReadonlyMap<string, TemplateRule>;

export function createTemplateRegistry(rules: readonly TemplateRule[]): TemplateRegistry {
    const registry = new Map<string, TemplateRule>();
    for (const rule of rules) {
        if (registry.has(rule.kind)) throw new Error(`two templates declare constraint kind ${rule.kind}`);
        registry.set(rule.kind, rule);
    }
    return registry;
}

/** A constraint as written: the parts of a Constraint object the engine uses. */
export interface ConstraintInput {
    kind: string;
    name: string;
    enforcementAction?: string;
    match?: Match;
    parameters?: Record<string, unknown>;
}

/** A constraint ready to evaluate: template resolved, parameters validated (defaults applied), match compiled. */
export interface Constraint {
    readonly kind: string;
    readonly name: string;
    readonly enforcementAction: EnforcementAction;
    readonly match: Match;
    readonly parameters: Record<string, unknown>;
    readonly rule: TemplateRule;
    readonly compiledMatch: CompiledMatch;
}

export function buildConstraint(input: ConstraintInput, registry: TemplateRegistry): Constraint {
    const where = `constraint ${input.kind}/${input.name}`;
    if (!input.name) throw new Error(`constraint of kind ${input.kind}: metadata.name is required`);
    const rule = registry.get(input.kind);
    if (!rule) {
        throw new Error(
            `${where}: unknown constraint kind ${JSON.stringify(input.kind)}; no template is registered for it ` +
                `(known kinds: ${[...registry.keys()].sort().join(", ")})`,
        );
    }
    const action = input.enforcementAction ?? "deny";
    if (!ENFORCEMENT_ACTIONS.includes(action as EnforcementAction)) {
        throw new Error(`${where}: spec.enforcementAction must be one of deny, warn, dryrun; got ${JSON.stringify(action)}`);
    }
    const parameters = validateParameters(rule.parameterSchema, input.parameters, where);
    const compiledMatch = compileMatch(input.match, `${where}: spec.match`);
    return {
        kind: input.kind,
        name: input.name,
        enforcementAction: action as EnforcementAction,
        match: input.match ?? {},
        parameters,
        rule,
        compiledMatch,
    };
}

/** The namespace exclusions of Gatekeeper's Config object that apply to us. */
export interface GatekeeperConfig {
    /** True when the namespace is excluded for the webhook/audit processes. */
    isNamespaceExcluded(namespace: string): boolean;
    /**
     * spec.sync.syncOnly: the kinds Gatekeeper replicates into data.inventory. The Wasm templates
     * (policies/gatekeeper/wasm) see only these, as on the cluster; without a Config nothing is synced.
     */
    readonly syncOnly?: readonly SyncKind[];
}

export interface SyncKind {
    group: string;
    version: string;
    kind: string;
}

export const EMPTY_CONFIG: GatekeeperConfig = { isNamespaceExcluded: () => false };

/** Processes of Config.spec.match[].processes whose exclusions a preview-time check honours. */
const OUR_PROCESSES = new Set(["*", "webhook", "audit"]);

/** Parses a config.gatekeeper.sh Config object; only spec.match exclusions affect validation. */
export function parseGatekeeperConfig(doc: unknown, source = "Config"): GatekeeperConfig {
    const spec = (doc as { spec?: { match?: unknown; sync?: { syncOnly?: unknown } } } | undefined)?.spec;
    const syncOnly = parseSyncOnly(spec?.sync?.syncOnly, source);
    const entries = spec?.match ?? [];
    if (!Array.isArray(entries)) throw new Error(`${source}: spec.match must be a list`);
    const excluded: string[] = [];
    entries.forEach((entry, i) => {
        const where = `${source}: spec.match[${i}]`;
        const namespaces = entry?.excludedNamespaces ?? [];
        const processes = entry?.processes ?? [];
        if (!isStringList(namespaces)) throw new Error(`${where}.excludedNamespaces must be a list of strings`);
        if (!isStringList(processes)) throw new Error(`${where}.processes must be a list of strings`);
        const bad = namespaces.map((n, j) => [j, namespaceEntryProblem(n)] as const).filter(([, p]) => p);
        if (bad.length > 0) throw new Error(bad.map(([j, p]) => `${where}.excludedNamespaces[${j}]: ${p}`).join("\n"));
        if (processes.some((p) => OUR_PROCESSES.has(p))) excluded.push(...namespaces);
    });
    const isNamespaceExcluded = excluded.length === 0 ? EMPTY_CONFIG.isNamespaceExcluded : compileWildcardList(excluded);
    if (syncOnly === undefined) return excluded.length === 0 ? EMPTY_CONFIG : { isNamespaceExcluded };
    return { isNamespaceExcluded, syncOnly };
}

function parseSyncOnly(value: unknown, source: string): SyncKind[] | undefined {
    if (value === undefined || value === null) return undefined;
    if (!Array.isArray(value)) throw new Error(`${source}: spec.sync.syncOnly must be a list of {group, version, kind}`);
    return value.map((entry, i) => {
        const e = entry as Partial<SyncKind> | null;
        if (!e || typeof e.kind !== "string" || !e.kind || typeof e.version !== "string" || !e.version || (e.group !== undefined && typeof e.group !== "string")) {
            throw new Error(`${source}: spec.sync.syncOnly[${i}] must be {group: string, version: string, kind: string}, got ${JSON.stringify(entry)}`);
        }
        return { group: e.group ?? "", version: e.version, kind: e.kind };
    });
}

const SPEC_FIELDS = new Set(["enforcementAction", "match", "parameters"]);

export interface ConstraintSet {
    constraints: Constraint[];
    config: GatekeeperConfig;
}

/**
 * Loads Gatekeeper Constraint objects (constraints.gatekeeper.sh/*) and at most one Config
 * (config.gatekeeper.sh/v1alpha1) from multi-document YAML; `kind: List` documents are flattened.
 * `source` (a file name) prefixes error messages.
 */
export function loadConstraintSet(yamlText: string, registry: TemplateRegistry, source = "constraints"): ConstraintSet {
    return constraintSetFromObjects(parseConstraintObjects(yamlText, source), registry, source);
}

/** The objects of a multi-document YAML constraint file, `kind: List` documents flattened (parsed once: YAML parsing is most of a load). */
export function parseConstraintObjects(yamlText: string, source = "constraints"): unknown[] {
    const docs = parsedDocuments(yamlText);
    const objects: unknown[] = [];
    for (const [i, doc] of (Array.isArray(docs) ? docs : []).entries()) {
        if (doc.errors.length > 0) throw new Error(`${source}: document ${i + 1}: ${doc.errors[0].message}`);
        const value = doc.toJS();
        if (value === null || value === undefined) continue;
        if (isObject(value) && value.kind === "List" && Array.isArray(value.items)) objects.push(...value.items);
        else objects.push(value);
    }
    return objects;
}

/**
 * The parsed documents of a text, kept for the process: every render reads the same constraint
 * file (a test process renders many times) and parsing is nearly all of the cost. Reusing a
 * Document is safe because toJS builds new values on each call, except a scalar whose value is an
 * object (a YAML 1.1 timestamp or binary), which toJS hands out as it is: such a text is not kept.
 */
function parsedDocuments(yamlText: string): ReturnType<typeof parseAllDocuments> {
    const kept = parsedTexts.get(yamlText);
    if (kept) return kept;
    const docs = parseAllDocuments(yamlText);
    if (Array.isArray(docs) && docs.every(hasOnlyPrimitiveScalars)) {
        if (parsedTexts.size >= PARSED_TEXTS_KEPT) parsedTexts.delete(parsedTexts.keys().next().value!);
        parsedTexts.set(yamlText, docs);
    }
    return docs;
}

const PARSED_TEXTS_KEPT = 8;
const parsedTexts = new Map<string, ReturnType<typeof parseAllDocuments>>();

function hasOnlyPrimitiveScalars(doc: Document.Parsed): boolean {
    let primitive = true;
    visit(doc, {
        Scalar: (_key, node) => {
            if (isScalar(node) && typeof node.value === "object" && node.value !== null) {
                primitive = false;
                return visit.BREAK;
            }
        },
    });
    return primitive;
}

/**
 * A constraint file the pack or the admission catalogue evaluates must hold constraints: an empty
 * one (emptied, comments only, only the Config) would switch every constraint off without a word.
 */
export function requireConstraints(set: ConstraintSet, source: string): ConstraintSet {
    if (set.constraints.length === 0)
        throw new Error(
            `${source} holds no constraints: an empty set would switch off every Gatekeeper constraint and the admission policies generated from them; ` +
                "expected the constraint file with its constraints (to silence one, set its enforcementAction to dryrun; to turn the policies off, set the gatekeeper-<action> policies to \"disabled\" in the pack config, where a reviewer sees it)",
        );
    return set;
}

/** Same as loadConstraintSet, from objects already parsed. */
export function constraintSetFromObjects(objects: readonly unknown[], registry: TemplateRegistry, source = "constraints"): ConstraintSet {
    const constraints: Constraint[] = [];
    const seen = new Set<string>();
    const refused: string[] = [];
    let config: GatekeeperConfig | undefined;
    objects.forEach((obj, i) => {
        const where = `${source}: object ${i + 1}`;
        if (!isObject(obj)) throw new Error(`${where}: expected a Kubernetes object, got ${typeof obj}`);
        const apiVersion = String(obj.apiVersion ?? "");
        const kind = String(obj.kind ?? "");
        const name = (obj.metadata as { name?: string } | undefined)?.name ?? "";
        if (apiVersion.startsWith("config.gatekeeper.sh/") && kind === "Config") {
            if (config) throw new Error(`${where}: more than one Gatekeeper Config object`);
            config = parseGatekeeperConfig(obj, `${source}: Config ${name}`);
            return;
        }
        if (apiVersion.startsWith("templates.gatekeeper.sh/")) {
            throw new Error(
                `${where}: ConstraintTemplate ${name} does not belong in a constraint file: the library's templates are built in, ` +
                    `a team's own goes in policies/templates/${name}.yaml (then npm run gatekeeper:wasm)`,
            );
        }
        if (!apiVersion.startsWith("constraints.gatekeeper.sh/")) {
            throw new Error(`${where}: ${apiVersion || "(no apiVersion)"} ${kind} ${name} is neither a Gatekeeper constraint nor a Config`);
        }
        const key = `${kind}/${name}`;
        if (seen.has(key)) throw new Error(`${where}: duplicate constraint ${key}`);
        seen.add(key);
        const spec = (obj.spec ?? {}) as { enforcementAction?: string; match?: Match; parameters?: Record<string, unknown> };
        if (!isObject(spec)) throw new Error(`${source}: constraint ${key}: spec must be an object`);
        for (const field of Object.keys(spec)) {
            if (!SPEC_FIELDS.has(field)) {
                throw new Error(`${source}: constraint ${key}: unknown spec field ${JSON.stringify(field)} (known: ${[...SPEC_FIELDS].join(", ")})`);
            }
        }
        refused.push(...enforceabilityProblems(kind, name, spec).map((p) => `${source}: constraint ${key}: ${p}`));
        try {
            constraints.push(
                buildConstraint(
                    { kind, name, enforcementAction: spec.enforcementAction, match: spec.match, parameters: spec.parameters },
                    registry,
                ),
            );
        } catch (err) {
            // Name the file: buildConstraint's errors name the constraint only.
            if (err instanceof Error && !err.message.startsWith(`${source}:`)) err.message = `${source}: ${err.message}`;
            throw err;
        }
    });
    if (refused.length > 0) throw new Error(refused.join("\n"));
    return { constraints, config: config ?? EMPTY_CONFIG };
}

function isObject(v: unknown): v is Record<string, unknown> {
    return typeof v === "object" && v !== null && !Array.isArray(v);
}

function isStringList(v: unknown): v is string[] {
    return Array.isArray(v) && v.every((s) => typeof s === "string");
}
