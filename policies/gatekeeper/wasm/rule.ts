/**
 * A team's own ConstraintTemplate as a template of the engine: its Rego, compiled to Wasm by
 * `npm run gatekeeper:wasm` (tools/gatekeeper/wasm.ts), evaluated by the pack's Wasm host with
 * Gatekeeper's input. Matching, enforcement actions, namespace exclusions and the expansion of
 * workloads into Pods stay the engine's (policies/gatekeeper/engine), as for the library's
 * templates. A template that also carries CEL code (engine K8sNativeValidation) is judged by its
 * CEL (policies/cel/judge.ts), as Gatekeeper judges it: its CEL driver is registered before the Rego one.
 *
 * input.review at preview: what the API server would send for creating the object (operation
 * CREATE, the engine's default; a preview step that updates an object is judged as its creation,
 * without oldObject, as Gatekeeper's audit does), with `namespaceObject` the stack's Namespace
 * of that name (null when the stack does not declare it: what the cluster holds cannot be known
 * at preview). data.inventory holds the stack's objects of the Config's syncOnly kinds.
 */
import { createHash } from "node:crypto";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { RegoEvalError, type Inventory, type K8sObject, type Review, type RuleContext, type TemplateRule, type Violation } from "../types";
import { HOST_BUILTINS } from "./builtins";
import { celSourceError, judgeCel } from "../../cel/judge";
import type { CelSource } from "../../cel/source";
import { ABSENT_PARAMETERS } from "../engine/parameter-schema";
import { goNumbersJSON, missingBuiltins, missingBuiltinsMessage, WasmEvalError, WasmPolicy, WasmTimeout } from "./host";
import { GENERATE_COMMAND, manifestBinding, parseTemplate, parseTemplateDocument, templateDigest, type ModuleManifest, type ParsedTemplate } from "./template";
import { PlanEvalError, planEvaluator, PlanTimeout, type PlanEvaluator } from "../plan/compile";
import { objectGet, RegoObject, RegoSet, resultsJSON, toJSON } from "../rego/values";

/** The opa version the modules are compiled with: the one Gatekeeper v3.23.1 vendors (tools/gatekeeper/build.sh). */
export const OPA_VERSION = "1.17.1";

/** Where the generated files of a template file live: <dir>/wasm/<stem>.wasm, <stem>.plan.json, <stem>.plan.js and <stem>.wasm.json. */
export function modulePaths(templateFile: string): { wasm: string; plan: string; js: string; manifest: string } {
    const dir = path.join(path.dirname(templateFile), "wasm");
    const stem = path.basename(templateFile).replace(/\.ya?ml$/, "");
    return { wasm: path.join(dir, `${stem}.wasm`), plan: path.join(dir, `${stem}.plan.json`), js: path.join(dir, `${stem}.plan.js`), manifest: path.join(dir, `${stem}.wasm.json`) };
}

/** A team's template, its Rego compiled: by its plan to JavaScript, or to Wasm. */
export interface CompiledTemplateRule extends TemplateRule {
    readonly parsed: ParsedTemplate;
    readonly engine: "plan" | "wasm" | "cel";
    /** The Rego's result set for Gatekeeper's input ({review, parameters}) and data, as JSON (what `opa eval` gives). */
    evaluateInput(input: unknown, data: unknown): { result: unknown }[];
}

export interface WasmTemplateRule extends CompiledTemplateRule {
    readonly engine: "wasm";
    readonly policy: WasmPolicy;
}

/**
 * How a template with CEL code is judged: by its CEL (the default, what Gatekeeper runs), or by
 * its Rego (`rego: true`: the library's Wasm judge of npm run test:gatekeeper, which compares the
 * compiled Rego with gator's Rego driver).
 */
export interface JudgeOptions {
    rego?: boolean;
    /**
     * Which compiled form evaluates the Rego: the plan compiled to JavaScript (the default,
     * where the compiler supports everything the plan uses) or the Wasm module (`wasm`).
     */
    engine?: "plan" | "wasm";
}

const sha256 = (b: Uint8Array | string) => `sha256:${createHash("sha256").update(b).digest("hex")}`;

/** Parsed templates and their digests by file text (and the name errors give it): a template read again is not parsed again. */
const parsedByText = new Map<string, { parsed: ParsedTemplate; digest: string }>();

/**
 * The template parsed, and its digest: from the manifest's copy of its document when the file
 * has the bytes the manifest names (the YAML is not read again), else from the file.
 */
function parsedTemplate(text: string, displayName: string, manifest: ModuleManifest | undefined): { parsed: ParsedTemplate; digest: string } {
    const fileDigest = sha256(text);
    const key = `${displayName}\u0000${fileDigest}`;
    let entry = parsedByText.get(key);
    if (entry === undefined) {
        const copy = manifest?.templateFile?.sha256 === fileDigest ? manifest.templateFile.document : undefined;
        const parsed = copy === undefined ? parseTemplate(text, displayName) : parseTemplateDocument(copy, displayName);
        entry = { parsed, digest: isCelOnly(parsed) ? "" : templateDigest(parsed, displayName, OPA_VERSION) };
        parsedByText.set(key, entry);
    }
    return entry;
}

/** Loads a template file and its generated module; a missing or stale module is an error naming both and the command. */
export function loadWasmTemplate(templateFile: string, displayName = templateFile, judge: JudgeOptions = {}): CompiledTemplateRule {
    const paths = modulePaths(templateFile);
    const rel = (p: string) => path.join(path.dirname(displayName), path.relative(path.dirname(templateFile), p));
    const manifest = existsSync(paths.manifest) ? readManifest(paths.manifest, rel(paths.manifest)) : undefined;
    const { parsed, digest } = parsedTemplate(readFileSync(templateFile, "utf8"), displayName, manifest);
    if (isCelOnly(parsed)) {
        // Nothing compiled: Gatekeeper judges a CEL-only template by its CEL, and so does the pack.
        const celError = celSourceError(parsed.cel);
        if (celError) throw new Error(`${displayName} (${parsed.kind}): ${celError}`);
        return celTemplateRule(parsed);
    }
    if (!existsSync(paths.wasm) || manifest === undefined) {
        throw new Error(`${displayName}: template ${parsed.kind} has no compiled module (${rel(paths.wasm)}); run ${GENERATE_COMMAND}`);
    }
    const stale = () =>
        new Error(
            `${displayName}: the compiled module of template ${parsed.kind} (${rel(paths.wasm)}) is stale: ` +
                `it was built from another version of the template, opa or the plan compiler, or a generated file changed; run ${GENERATE_COMMAND}`,
        );
    const compiledToJs = typeof manifest.planJs === "string";
    if (manifest.digest !== digest || manifest.kind !== parsed.kind || compiledToJs === (typeof manifest.planRefused === "string") || manifest.binding !== manifestBinding(manifest)) throw stale();
    const source = `${displayName} (${parsed.kind})`;
    // The manifest's list is the module's own (its digest is checked above): a template that needs a
    // built-in the host lacks is refused now, and the module is instantiated when a constraint first uses it.
    const missing = missingBuiltins(manifest.builtins ?? [], HOST_BUILTINS);
    if (missing.length > 0) throw new Error(missingBuiltinsMessage(source, missing));
    const celError = !judge.rego && parsed.cel ? celSourceError(parsed.cel) : undefined;
    if (celError) throw new Error(`${source}: ${celError}`);
    // The Wasm module is read, checked against the manifest and instantiated when first used.
    const wasmBytes = () => {
        const bytes = readFileSync(paths.wasm);
        if (manifest.wasm !== sha256(bytes)) throw stale();
        return new Uint8Array(bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer);
    };
    // The plan compiled to JavaScript, unless the compiler refused it (a statement or built-in it lacks): then the Wasm module.
    if (judge.engine === "wasm" || !compiledToJs) {
        const bytes = wasmBytes();
        return wasmTemplateRule(parsed, () => new WasmPolicy(bytes, source), { ...judge, engine: "wasm" }, manifest.planRefused);
    }
    if (!existsSync(paths.js)) throw stale();
    const js = readFileSync(paths.js, "utf8");
    const jsDigest = sha256(js);
    if (manifest.planJs !== jsDigest) throw stale();
    let evaluator: PlanEvaluator;
    try {
        evaluator = planEvaluator(js, jsDigest, rel(paths.js));
    } catch (err) {
        throw new Error(`${stale().message} (${(err as Error).message})`);
    }
    return planTemplateRule(parsed, evaluator, judge);
}

/** The team's template files cannot be loaded: their own problem (a template, its generated files), never the pack config's. */
export class TeamTemplateError extends Error {
    override name = "TeamTemplateError";
}

/** Whether a template has only CEL code (no Rego): judged by its CEL, nothing compiled. */
export function isCelOnly(parsed: ParsedTemplate): parsed is ParsedTemplate & { cel: NonNullable<ParsedTemplate["cel"]> } {
    return parsed.rego === "" && parsed.cel !== undefined;
}

/** A generated manifest, read; one that is not JSON (cut off, edited) is an error naming it. */
export function readManifest(file: string, display: string): ModuleManifest {
    const text = readFileSync(file, "utf8");
    let manifest: unknown;
    try {
        manifest = JSON.parse(text);
    } catch (err) {
        throw new Error(`${display}: the generated manifest is not valid JSON (${(err as Error).message}; cut off or edited?); run ${GENERATE_COMMAND}`);
    }
    if (manifest === null || typeof manifest !== "object" || Array.isArray(manifest)) throw new Error(`${display}: the generated manifest is not a JSON object; run ${GENERATE_COMMAND}`);
    return manifest as ModuleManifest;
}

/** The violations of a template's CEL for the constraint and review of `ctx` (a constraint without parameters: Gatekeeper's null params). */
function celViolations(cel: CelSource, ctx: RuleContext): Violation[] {
    return judgeCel(cel, ctx.parameters === ABSENT_PARAMETERS ? undefined : ctx.parameters, ctx.review).messages.map((msg) => ({ msg }));
}

/** A CEL-only template as a template of the engine: every constraint judged by its CEL. */
export function celTemplateRule(parsed: ParsedTemplate & { cel: NonNullable<ParsedTemplate["cel"]> }): CompiledTemplateRule {
    const cel = parsed.cel;
    return {
        kind: parsed.kind,
        template: parsed.name,
        category: "general",
        description: `ConstraintTemplate ${parsed.name} (CEL only, judged by its CEL)`,
        parameterSchema: parsed.parameterSchema,
        parsed,
        engine: "cel",
        evaluateInput() {
            throw new Error(`${parsed.name} has no Rego: it is judged by its CEL`);
        },
        validate(ctx: RuleContext): Violation[] {
            return celViolations(cel, ctx);
        },
    };
}

/**
 * The template's input.review: the engine's review with the stack's Namespace of its namespace
 * (made once per review: the engine hands every constraint of an object the same review in a row,
 * so the last one is kept at hand).
 */
function reviewOf(review: RuleContext["review"], inventory: Inventory): unknown {
    if (review !== lastReview || inventory !== lastInventory) {
        const ns = review.namespace;
        // Written out (a spread and one more key costs 20 times as much); every key of Review is named, or this does not compile.
        // The keys an AdmissionRequest has as JSON (k8s.io/api admission/v1): uid, resource, userInfo and
        // options always (empty), oldObject null unless an UPDATE, name and namespace when not empty.
        const withNamespace: Required<Review> & { namespaceObject: unknown; uid: string; resource: unknown; options: null } = {
            uid: "",
            object: review.object,
            oldObject: review.oldObject ?? (null as unknown as K8sObject),
            kind: review.kind,
            resource: NO_RESOURCE,
            operation: review.operation,
            name: review.name || undefined!,
            namespace: review.namespace || undefined!,
            userInfo: review.userInfo ?? NO_USER,
            options: null,
            namespaceObject: ns === undefined ? null : (namespacesOf(inventory).get(ns) ?? null),
        };
        lastWithNamespace = withNamespace;
        lastReview = review;
        lastInventory = inventory;
    }
    return lastWithNamespace;
}
const NO_RESOURCE = Object.freeze({ group: "", version: "", resource: "" });
const NO_USER = Object.freeze({});
let lastReview: object | undefined;
let lastInventory: object | undefined;
let lastWithNamespace: unknown;

/** What a review without violations gives: shared (frozen; the engine only reads it). */
const NO_VIOLATIONS = Object.freeze([]) as unknown as Violation[];

/** The violations of a result set ([{result: [{msg, details}]}]), as the constraint framework reads them. */
function violationsOf(set: readonly { result: unknown }[]): Violation[] {
    const results = (set[0]?.result ?? []) as { msg: unknown; details: unknown }[];
    if (results.length === 0) return NO_VIOLATIONS;
    return results.map((r) => violation(r.msg, r.details));
}

/** One result as the constraint framework reads it: its msg and details as JSON (details left out when empty). */
function violation(msg: unknown, details: unknown): Violation {
    // The constraint framework (drivers ToResult) fails the whole review on a msg that is not a string.
    if (typeof msg !== "string") throw new Error(`extracting message binding: msg is ${JSON.stringify(toJSON(msg))}, not a string`);
    const v: Violation = { msg };
    if (details !== undefined && !(details instanceof RegoObject && details.size === 0)) {
        const json = toJSON(details);
        if (!isEmptyObject(json)) v.details = json as Record<string, unknown>;
    }
    return v;
}

/**
 * The violations of a compiled plan's result set, read off its values: the hook's violation set
 * ({msg, details} objects) in the order they were found, duplicates included (the engine keeps
 * one of each msg and details, as it does for every template), only details made JSON.
 */
function planViolations(set: readonly unknown[]): Violation[] {
    const result = set.length === 1 ? objectGet(set[0], "result") : undefined;
    if (!(result instanceof RegoSet)) return violationsOf(resultsJSON(set));
    const found = result.valuesSeenOnceOrMore();
    if (found.length === 0) return NO_VIOLATIONS;
    const out: Violation[] = [];
    for (let i = 0; i < found.length; i++) out.push(violation(objectGet(found[i], "msg"), objectGet(found[i], "details")));
    return out;
}

/** Whether a template's Rego names `data` beyond its libs: one that does not cannot read data.inventory and is not given it. */
function readsDataDocument(parsed: ParsedTemplate): boolean {
    return [parsed.rego, ...parsed.libs].some((rego) => /\bdata\b(?!\.libs?\b)/.test(rego));
}

/**
 * A template's evaluation that ran past its time budget: named, with the object, and said for
 * every later evaluation of the template in the process (each would run as long).
 */
function timeoutText(parsed: ParsedTemplate, review: RuleContext["review"], budgetMs: number): string {
    const object = `${review.kind.kind}/${review.namespace ? `${review.namespace}/` : ""}${review.name ?? ""}`;
    return `ConstraintTemplate ${parsed.name} (${parsed.kind}) ran longer than its time budget of ${budgetMs} ms (OPS_TEMPLATE_TIME_BUDGET_MS) on ${object} and was stopped; its Rego does too much work (nested comprehensions over data.inventory?); it is not evaluated again in this run`;
}

/** A template whose Rego runs as its plan compiled to JavaScript, on the review and inventory as they are (no copy). */
export function planTemplateRule(parsed: ParsedTemplate, evaluate: PlanEvaluator, judge: JudgeOptions = {}): CompiledTemplateRule {
    let timedOut: string | undefined;
    const cel = judge.rego ? undefined : parsed.cel;
    const readsData = readsDataDocument(parsed);
    return {
        kind: parsed.kind,
        template: parsed.name,
        category: "general",
        description: `ConstraintTemplate ${parsed.name} (Rego compiled from its plan)`,
        parameterSchema: parsed.parameterSchema,
        parsed,
        engine: "plan",
        evaluateInput(input: unknown, data: unknown) {
            return toJSON(evaluate(input, data)) as { result: unknown }[];
        },
        validate(ctx: RuleContext): Violation[] {
            const { review, inventory } = ctx;
            if (cel) return celViolations(cel, ctx);
            if (timedOut !== undefined) throw new Error(timedOut);
            const input = { review: reviewOf(review, inventory), parameters: ctx.parameters ?? {} };
            let set: unknown[];
            try {
                set = evaluate(input, readsData ? dataOf(inventory) : NO_DATA);
            } catch (err) {
                if (err instanceof PlanEvalError) throw new RegoEvalError(gatekeeperErrorText(err.message, parsed));
                if (err instanceof PlanTimeout) throw new Error((timedOut = timeoutText(parsed, review, err.budgetMs)));
                throw err;
            }
            return planViolations(set);
        },
    };
}

/** The engine's template for a parsed template and its module (or a function making it, called once on first use). */
export function wasmTemplateRule(parsed: ParsedTemplate, module: WasmPolicy | (() => WasmPolicy), judge: JudgeOptions = {}, why?: string): WasmTemplateRule {
    const cel = judge.rego ? undefined : parsed.cel;
    let made: WasmPolicy | undefined = typeof module === "function" ? undefined : module;
    const readsData = readsDataDocument(parsed);
    const policyOf = (): WasmPolicy => (made ??= (module as () => WasmPolicy)());
    let timedOut: string | undefined;
    return {
        kind: parsed.kind,
        template: parsed.name,
        category: "general",
        description: `ConstraintTemplate ${parsed.name} (Rego compiled to Wasm${why ? `: its plan ${why}` : ""})`,
        parameterSchema: parsed.parameterSchema,
        parsed,
        engine: "wasm",
        get policy() {
            return policyOf();
        },
        evaluateInput(input: unknown, data: unknown) {
            const policy = policyOf();
            policy.setData(data);
            try {
                return policy.evaluate(input);
            } catch (err) {
                // As the plan's: the module's text, an Error.
                if (err instanceof WasmEvalError) throw new PlanEvalError(err.message);
                throw err;
            }
        },
        validate(ctx: RuleContext): Violation[] {
            const { review, inventory } = ctx;
            // A template with CEL code is judged by its CEL, as Gatekeeper judges it (its CEL driver comes first).
            if (cel) return celViolations(cel, ctx);
            if (timedOut !== undefined) throw new Error(timedOut);
            const policy = policyOf();
            policy.setData(readsData ? dataOf(inventory) : NO_DATA);
            let reviewBytes = reviewJSON.get(review);
            if (reviewBytes === undefined) {
                reviewBytes = utf8.encode(goNumbersJSON(JSON.stringify(reviewOf(review, inventory))));
                reviewJSON.set(review, reviewBytes);
            }
            const parameters = ctx.parameters ?? {};
            let parametersBytes = parameterJSON.get(parameters);
            if (parametersBytes === undefined) {
                parametersBytes = utf8.encode(goNumbersJSON(JSON.stringify(parameters)));
                parameterJSON.set(parameters, parametersBytes);
            }
            let set: { result: unknown }[];
            try {
                set = policy.evaluateJSON([INPUT_START, reviewBytes, INPUT_MIDDLE, parametersBytes, INPUT_END]);
            } catch (err) {
                if (err instanceof WasmEvalError) throw new RegoEvalError(gatekeeperErrorText(err.message, parsed));
                if (err instanceof WasmTimeout) throw new Error((timedOut = timeoutText(parsed, review, err.budgetMs)));
                throw err;
            }
            return violationsOf(set);
        },
    };
}

/**
 * The module's runtime error ("src/template.rego:4:1: var assignment conflict") in the words of
 * OPA's topdown as Gatekeeper reports it ("template:4: eval_conflict_error: functions must not
 * produce multiple outputs for same inputs"): Gatekeeper names the template's module "template"
 * and its libraries libs["lib_<i>"]; the Wasm module says "var assignment conflict" both for a
 * function and for a complete rule, which the Rego at that line tells apart. Other texts are kept.
 */
export function gatekeeperErrorText(message: string, t: ParsedTemplate): string {
    const m = /^src\/(template|lib_(\d+))\.rego:(\d+):\d+: (var assignment conflict|object insert conflict)$/.exec(message);
    if (!m) return message;
    const file = m[2] === undefined ? "template" : `libs["lib_${m[2]}"]`;
    const source = m[2] === undefined ? t.rego : (t.libs[Number(m[2])] ?? "");
    const line = source.split("\n")[Number(m[3]) - 1] ?? "";
    const text =
        m[4] === "object insert conflict"
            ? "object keys must be unique"
            : /^\s*[A-Za-z_][\w.]*\s*\(/.test(line)
              ? "functions must not produce multiple outputs for same inputs"
              : "complete rules must not produce multiple outputs";
    return `${file}:${m[3]}: eval_conflict_error: ${text}`;
}

// The engine hands every constraint of an object the same review, and every object the same
// inventory and parameters objects: their JSON (UTF-8) is made once.
const reviewJSON = new WeakMap<object, Uint8Array>();
const parameterJSON = new WeakMap<object, Uint8Array>();
const utf8 = new TextEncoder();
const INPUT_START = utf8.encode('{"review":');
const INPUT_MIDDLE = utf8.encode(',"parameters":');
const INPUT_END = utf8.encode("}");
const dataByInventory = new WeakMap<object, unknown>();
const namespacesByInventory = new WeakMap<object, Map<string, K8sObject>>();
const NO_DATA = { inventory: {} };

function dataOf(inventory: Inventory): unknown {
    if (inventory === lastData.inventory) return lastData.data;
    const inv = inventory.gatekeeperData?.();
    if (!inv) return NO_DATA;
    let data = dataByInventory.get(inv);
    if (!data) dataByInventory.set(inv, (data = { inventory: inv }));
    lastData = { inventory, data };
    return data;
}
let lastData: { inventory?: object; data?: unknown } = {};

/** The stack's Namespace objects by name (input.review.namespaceObject). */
function namespacesOf(inventory: Inventory): Map<string, K8sObject> {
    let byName = namespacesByInventory.get(inventory);
    if (!byName) {
        byName = new Map();
        for (const n of inventory.list("Namespace", { group: "" })) if (typeof n.metadata?.name === "string" && !byName.has(n.metadata.name)) byName.set(n.metadata.name, n);
        namespacesByInventory.set(inventory, byName);
    }
    return byName;
}

function isEmptyObject(v: unknown): boolean {
    return typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0;
}

/**
 * Every ConstraintTemplate file (*.yaml) of a folder, loaded; an absent folder has none. Every
 * file is tried: the problems of all of them are reported at once, a line each, and so are two
 * files declaring one kind.
 */
export function loadWasmTemplates(dir: string, displayDir = dir): CompiledTemplateRule[] {
    if (!existsSync(dir)) return [];
    const rules: CompiledTemplateRule[] = [];
    const problems: string[] = [];
    const byKind = new Map<string, string>();
    for (const f of readdirSync(dir).filter((n) => /\.ya?ml$/.test(n)).sort()) {
        const display = path.join(displayDir, f);
        try {
            const rule = loadWasmTemplate(path.join(dir, f), display);
            const other = byKind.get(rule.kind);
            if (other !== undefined) problems.push(`${display}: declares constraint kind ${rule.kind}, as ${other} does; keep one template per kind`);
            else {
                byKind.set(rule.kind, display);
                rules.push(rule);
            }
        } catch (err) {
            problems.push((err as Error).message);
        }
    }
    if (problems.length === 1) throw new TeamTemplateError(problems[0]);
    if (problems.length > 1) throw new TeamTemplateError(`${problems.length} team templates cannot be loaded:\n${problems.map((p) => `- ${p}`).join("\n")}`);
    return rules;
}
