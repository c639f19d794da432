/**
 * Gatekeeper's own engine as the oracle (issue 21):
 *
 *   npm run test:gatekeeper -- --library DIR [--seeds 1,2] [--mutants 20000] [--stacks dev,prod] [--gator BIN] [--show 20] [--gator-timeout 1800]
 *                              [--opa BIN | --opa none] [--engine plan|wasm] [--custom-mutants 100]
 *
 * DIR is a checkout of the Gatekeeper library at the commit shared/conformance/gatekeeper names
 * (also GATEKEEPER_LIBRARY); without it the command says so and skips (exit 0). gator is built
 * from the Go module proxy by tools/gatekeeper/build.sh when it is not in the tool cache.
 *
 * For each seed it mutates every case of the library's suites and the project's own constraint
 * sets applied to the rendered stacks (objects: fields removed, set to null, replaced by values
 * seen elsewhere, lists emptied or grown; parameters: dropped, replaced, emptied, grown), keeps
 * the objects a Kubernetes API server would let reach admission (../shared/tools/k8s-strict-check.py)
 * and the parameters the pack's schema check accepts, and requires
 *   - the same violations (count and message, per object and constraint) from gator (the library's
 *     Rego under Gatekeeper's constraint framework) and from the pack's engine;
 *   - the same verdict (refused or not) from the generated ValidatingAdmissionPolicy (offline CEL)
 *     as from gator, on the object as the API server decodes it (nulls dropped);
 *   - the same violations from the third judge, the library's Rego compiled by opa (into the tool
 *     cache) and run as the pack runs a team's template: its plan compiled to JavaScript (or, with
 *     --engine wasm, its Wasm module in the pack's Wasm host), as from gator (--opa none leaves it out).
 * Then the test templates of the Wasm host (a team's own templates, tools/gatekeeper/customTemplates.ts)
 * on their own mutants (--custom-mutants per base object; 0 leaves them out): gator against the
 * pack, which judges them by their committed Wasm modules; the one calling a built-in the host does
 * not provide must be refused, naming it.
 * Messages of violations on pod templates are compared without their "[Implied by ...]" prefix:
 * Gatekeeper names the ExpansionTemplate there, the pack the workload (see docs/admission.md).
 * Prints `admission:`, `wasm:`, `custom:` and `gatekeeper: N agree, N differ`; exit 1 on any difference.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { parseAllDocuments } from "yaml";
import { buildConstraint, effectiveNamespace, evaluate, expandPodTemplate, type Constraint, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import { defaultIsClusterScoped, withDeclaredScopes, type ScopePredicate } from "../../policies/gatekeeper/engine/scope";
import { CLASSES, teamCorpus, type TeamCorpus } from "./teamCorpus";
import { EXPANDABLE_KINDS } from "../../policies/gatekeeper/engine/expansion";
import { templateRegistry } from "../../policies/gatekeeper/templates";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { decodedJson, namespaceLabelsOf } from "../../policies/admission/agreement";
import { generateAdmissionPolicies } from "../../policies/admission/generate";
import { admissionRules } from "../../policies/admission/rules";
import { admit } from "../../policies/admission/simulate";
import { EXPANSION_TEMPLATES, objectKey, runGator } from "./gator";
import { readLibrary, type Library } from "./library";
import { customTemplates, type CustomTemplates } from "./customTemplates";
import { mutate, seededRng, ValuePool, type Path, type Rng } from "./mutate";
import { opaPath } from "./wasm";
import { engineFlag, syncAll, wasmLibraryRegistry, type Engine } from "./wasmLibrary";

const REPO = path.resolve(__dirname, "..", "..");
const STRICT_CHECK = path.resolve(REPO, "..", "shared", "tools", "k8s-strict-check.py");
const SCHEMA_VERSION = "1.35";

/** One set of objects judged by one set of constraints in one gator run. */
export interface Group {
    id: string;
    constraints: K8sObject[];
    objects: K8sObject[];
    /** Other objects the templates see (data.inventory); never judged. */
    inventory: K8sObject[];
    /** Object mutants to keep per object, constraint mutants per constraint. */
    objectMutants: number;
    constraintMutants: number;
    /** The templates the pack judges the constraints with (default: the library's in TypeScript). */
    registry?: TemplateRegistry;
    /** Gator with its CEL driver on (its default): a template with CEL code is judged by its CEL. */
    native?: boolean;
    /** The pack judges the objects as unchanged (its operation model's audit view), as gator does; else as creations. */
    audit?: boolean;
}

interface Variant {
    value: K8sObject;
    /** "" for the original; the mutations otherwise. */
    ops: string;
    mutant: boolean;
}

export interface Difference {
    group: string;
    object: string;
    objectOps: string;
    constraint: string;
    constraintOps: string;
    gator: string[];
    pack: string[];
    /** The judge compared with gator: the pack (TypeScript templates, the default) or the Wasm engine. */
    judge?: "wasm";
}

export interface SeedReport {
    seed: number;
    objectMutants: number;
    constraintMutants: number;
    /** Mutants the strict check refused (not admissible) or the pack's parameter check refused. */
    refusedObjects: number;
    refusedConstraints: number;
    agree: number;
    differ: Difference[];
    admissionAgree: number;
    admissionDiffer: Difference[];
    gatorRuns: number;
    gatorSeconds: number;
    /** The third judge: the library's Rego compiled to Wasm, against gator on the same pairs. */
    wasmAgree: number;
    wasmDiffer: Difference[];
}

const protectObject = (p: Path) => p[0] === "apiVersion" || p[0] === "kind" || (p[0] === "metadata" && (p.length === 1 || p[1] === "name"));

export const normalizeMessage = (m: string) => m.replace(/^\[Implied by [^\]]*\] /, "[Implied by <expansion>] ");

const holdsNull = (v: unknown): boolean => v === null || (typeof v === "object" && Object.values(v as object).some(holdsNull));

/**
 * The object as it reaches admission: the API server sets metadata.namespace of a namespaced
 * object to the request's namespace (here "default", as the pack assumes); gator takes the
 * object as written, so it is given the namespace explicitly.
 */
export function inNamespace<T extends K8sObject>(o: T): T {
    return inNamespaceWith(o, defaultIsClusterScoped);
}

/** inNamespace with the scope of custom kinds a group's CRDs declare. */
export function inNamespaceWith<T extends K8sObject>(o: T, scope: ScopePredicate): T {
    if (!o || typeof o !== "object" || !o.metadata || typeof o.metadata !== "object") return o;
    const namespace = effectiveNamespace(o, scope);
    if (namespace === undefined || o.metadata.namespace === namespace) return o;
    return { ...o, metadata: { ...o.metadata, namespace } };
}

function renamed<T extends K8sObject>(o: T, suffix: string): T {
    const copy = structuredClone(o);
    if (copy.metadata && typeof copy.metadata === "object" && typeof copy.metadata.name === "string") copy.metadata.name = `${copy.metadata.name}${suffix}`;
    return copy;
}

/** "ok" or the first problem per object, from the strict check (one python process for all). */
export function admissible(objects: readonly unknown[]): boolean[] {
    if (objects.length === 0) return [];
    const r = spawnSync("python3", [path.join(__dirname, "schema.py"), STRICT_CHECK, SCHEMA_VERSION], {
        input: objects.map((o) => JSON.stringify(o)).join("\n") + "\n",
        encoding: "utf8",
        maxBuffer: 1024 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`tools/gatekeeper/schema.py failed: ${r.stderr || r.error?.message}`);
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    if (lines.length !== objects.length) throw new Error(`tools/gatekeeper/schema.py judged ${lines.length} of ${objects.length} objects`);
    return lines.map((l) => l === "ok");
}

function constraintMutant(c: K8sObject, rng: Rng, pool: ValuePool): { value: K8sObject; ops: string } | undefined {
    const params = c.spec?.parameters;
    if (params === undefined || params === null || typeof params !== "object") return undefined;
    const copy = structuredClone(c);
    if (rng.next() < 0.15) {
        delete copy.spec.parameters;
        return { value: copy, ops: "remove .spec.parameters" };
    }
    const m = mutate(params, rng, pool, { operations: ["remove", "replace", "empty", "grow"], maxOperations: 2 });
    if (!m) return undefined;
    // The API server drops nulls of a custom resource before validating it (gator does not).
    copy.spec.parameters = decodedJson(m.value);
    return { value: copy, ops: m.operations.map((o) => o.replace(/^(\w+) /, "$1 .spec.parameters")).join("; ") };
}

export function toConstraintInput(c: K8sObject) {
    return { kind: c.kind ?? "", name: c.metadata?.name ?? "", enforcementAction: c.spec?.enforcementAction, match: c.spec?.match, parameters: c.spec?.parameters };
}

interface PreparedGroup {
    group: Group;
    objects: Variant[];
    constraints: (Variant & { built: Constraint })[];
}

/** Rounds of object mutants: a base short of its quota after a round gets more candidates, sized by how many of its candidates were admissible so far. */
const MUTATION_ROUNDS = 4;

/** Mutants of every group, kept when admissible (objects) or accepted by the pack (parameters). */
export function prepare(groups: readonly Group[], seed: number, pool: ValuePool, report: SeedReport): PreparedGroup[] {
    const rng = seededRng(seed);
    const prepared: PreparedGroup[] = groups.map((group) => ({ group, objects: [], constraints: [] }));
    const kept = new Map<string, number>();
    const tried = new Map<string, number>();
    const usable = new Map<string, number>();
    const seen = new Set<string>();
    for (let round = 0; round < MUTATION_ROUNDS; round++) {
        const candidates: { g: number; base: number; value: K8sObject; ops: string }[] = [];
        groups.forEach((group, g) => {
            group.objects.forEach((o, base) => {
                if (round === 0) candidates.push({ g, base, value: o, ops: "" });
                const k = `${g}/${base}`;
                const short = group.objectMutants - (kept.get(k) ?? 0);
                if (short <= 0) return;
                const t = tried.get(k) ?? 0;
                // No admissible candidate yet (e.g. a kind the schemas do not know): no more rounds.
                if (t > 0 && (usable.get(k) ?? 0) === 0) return;
                const rate = t === 0 ? 0.25 : Math.max((usable.get(k) ?? 0) / t, 0.02);
                const n = Math.min(Math.ceil(short / rate) + 2, short * 50 + 2);
                tried.set(k, t + n);
                for (let i = 0; i < n; i++) {
                    const m = mutate(o, rng, pool, { protect: protectObject, maxOperations: 2 });
                    if (m) candidates.push({ g, base, value: m.value, ops: m.operations.join("; ") });
                }
            });
        });
        if (candidates.length === 0) break;
        const ok = admissible(candidates.map((c) => c.value));
        candidates.forEach((c, i) => {
            const p = prepared[c.g];
            const original = c.ops === "";
            const text = `${c.g}:${JSON.stringify(c.value)}`;
            if (seen.has(text)) return;
            seen.add(text);
            // A workload without its pod template: the API server requires one (spec.template,
            // spec.jobTemplate.spec.template) and gator cannot expand it.
            if (!ok[i] || (EXPANDABLE_KINDS.has(c.value.kind ?? "") && !expandPodTemplate(c.value))) {
                if (!original) report.refusedObjects++;
                return;
            }
            const k = `${c.g}/${c.base}`;
            if (!original) usable.set(k, (usable.get(k) ?? 0) + 1);
            if (!original && (kept.get(k) ?? 0) >= p.group.objectMutants) return;
            if (!original) {
                kept.set(k, (kept.get(k) ?? 0) + 1);
                report.objectMutants++;
            }
            const value = renamed(inNamespace(c.value), `-v${p.objects.length}`);
            p.objects.push({ value, ops: c.ops, mutant: !original });
            // What the API server hands to admission: the same object without its nulls.
            if (holdsNull(value)) p.objects.push({ value: renamed(inNamespace(decodedJson(c.value) as K8sObject), `-v${p.objects.length}`), ops: `${c.ops} (as decoded)`, mutant: false });
        });
    }
    prepared.forEach((p) => {
        p.group.constraints.forEach((c, ci) => {
            const add = (value: K8sObject, ops: string, mutant: boolean) => {
                try {
                    // Gatekeeper's constraint names have at most 63 characters.
                    const suffix = `-p${ci}x${p.constraints.length}`;
                    const named = mutant ? { ...value, metadata: { ...value.metadata, name: `${String(value.metadata?.name).slice(0, 63 - suffix.length)}${suffix}` } } : value;
                    p.constraints.push({ value: named, ops, mutant, built: buildConstraint(toConstraintInput(named), p.group.registry ?? templateRegistry) });
                    if (mutant) report.constraintMutants++;
                } catch {
                    if (mutant) report.refusedConstraints++;
                    else throw new Error(`${p.group.id}: the pack refuses the original constraint ${c.kind}/${c.metadata?.name}`);
                }
            };
            add(c, "", false);
            const texts = new Set([JSON.stringify(c.spec?.parameters ?? null)]);
            for (let i = 0, made = 0; made < p.group.constraintMutants && i < p.group.constraintMutants * 4; i++) {
                const m = constraintMutant(c, rng, pool);
                if (!m) continue;
                const t = JSON.stringify(m.value.spec?.parameters ?? null);
                if (texts.has(t)) continue;
                texts.add(t);
                made++;
                add(m.value, m.ops, true);
            }
        });
    });
    return prepared;
}

/** Gator on a prepared group; objects or constraints gator refuses are removed (and reported as differences). */
function gatorVerdicts(gator: string, templates: readonly K8sObject[], p: PreparedGroup, report: SeedReport, timeoutSeconds: number) {
    for (let attempt = 0; attempt < 200; attempt++) {
        const docs = [...templates, ...EXPANSION_TEMPLATES, ...p.constraints.map((c) => c.value), ...p.group.inventory.map((o) => inNamespaceWith(o, withDeclaredScopes(p.group.inventory, defaultIsClusterScoped))), ...p.objects.map((o) => o.value)];
        const t0 = Date.now();
        const run = runGator(gator, docs, timeoutSeconds * 1000, p.group.native ?? false);
        report.gatorRuns++;
        report.gatorSeconds += (Date.now() - t0) / 1000;
        if (run.ok) return run.violations;
        const constraint = /adding constraint "([^"]+)"/.exec(run.error)?.[1];
        const reviewed = /reviewing (?:expanded resource )?\S+ ([^/\s]*)\/(\S+):/.exec(run.error) ?? /expanding resource (\S+):/.exec(run.error);
        if (constraint) {
            const c = p.constraints.find((x) => x.value.metadata?.name === constraint);
            if (!c) throw new Error(`${p.group.id}: ${run.error}`);
            report.differ.push({ group: p.group.id, object: "(none)", objectOps: "", constraint: `${c.value.kind}/${constraint}`, constraintOps: c.ops, gator: [`refused: ${run.error.split("\n")[0]}`], pack: ["accepted"] });
            p.constraints.splice(p.constraints.indexOf(c), 1);
            continue;
        }
        const unexpandable = /could not find source field "[^"]+" in resource (\S+)/.exec(run.error);
        if (unexpandable) {
            // A workload without its pod template: the API server requires one (spec.template,
            // spec.jobTemplate.spec.template), so such an object never reaches admission.
            const o = p.objects.find((x) => x.value.metadata?.name === unexpandable[1]);
            if (!o) throw new Error(`${p.group.id}: ${run.error}`);
            p.objects.splice(p.objects.indexOf(o), 1);
            if (o.mutant) {
                report.objectMutants--;
                report.refusedObjects++;
            }
            continue;
        }
        if (reviewed) {
            const name = reviewed.length === 3 ? reviewed[2] : reviewed[1];
            const o = p.objects.find((x) => x.value.metadata?.name === name);
            if (!o) throw new Error(`${p.group.id}: ${run.error}`);
            report.differ.push({ group: p.group.id, object: objectKey(o.value), objectOps: o.ops, constraint: "(any)", constraintOps: "", gator: [`error: ${run.error.split("\n")[0]}`], pack: ["(evaluated)"] });
            p.objects.splice(p.objects.indexOf(o), 1);
            continue;
        }
        throw new Error(`${p.group.id}: ${run.error}`);
    }
    throw new Error(`${p.group.id}: gator kept failing`);
}

/** The violation messages of one engine by (object, constraint name). */
function messagesByPair(objects: readonly K8sObject[], results: ReturnType<typeof evaluate>): Map<string, string[]> {
    const by = new Map<string, string[]>();
    for (const r of results) {
        const k = `${objectKey(objects[r.objectIndex])}\u0000${r.constraintName}`;
        by.set(k, [...(by.get(k) ?? []), normalizeMessage(r.message)]);
    }
    return by;
}

/**
 * Judges a prepared group with gator, the pack and, given `wasm` (the library's templates
 * compiled to Wasm), the Wasm engine as a third judge. `templates`: the ConstraintTemplate objects
 * gator loads, by kind. data.inventory holds every inventory object and every judged object on all
 * sides (gator syncs them all; the engine through a Config that syncs each kind seen).
 */
export function judge(gator: string, templates: ReadonlyMap<string, K8sObject>, p: PreparedGroup, report: SeedReport, gatorTimeoutSeconds = 600, wasm?: TemplateRegistry): void {
    const kinds = [...new Set(p.constraints.map((c) => c.value.kind ?? ""))];
    const templateObjects = kinds.map((k) => {
        const t = templates.get(k);
        if (!t) throw new Error(`${p.group.id}: no ConstraintTemplate for ${k}`);
        return t;
    });
    const gatorViolations = gatorVerdicts(gator, templateObjects, p, report, gatorTimeoutSeconds);
    const key = (object: string, constraint: string) => `${object}\u0000${constraint}`;
    const byGator = new Map<string, string[]>();
    for (const v of gatorViolations) {
        const k = key(v.object, v.constraintName);
        byGator.set(k, [...(byGator.get(k) ?? []), normalizeMessage(v.message)]);
    }
    const objects = p.objects.map((o) => o.value);
    // The group's own CRDs say which of its custom kinds are cluster-scoped.
    const scope = withDeclaredScopes(p.group.inventory, defaultIsClusterScoped);
    const inventory = [...p.group.inventory.map((o) => inNamespaceWith(o, scope)), ...objects];
    const synced = syncAll(inventory);
    const byPack = messagesByPair(objects, evaluate(objects, p.constraints.map((c) => c.built), synced, { inventory, ...(p.group.audit ? { previous: objects } : {}) }));
    let byWasm: Map<string, string[]> | undefined;
    const wasmRefused = new Map<string, string>();
    if (wasm) {
        const built: Constraint[] = [];
        for (const c of p.constraints) {
            try {
                built.push(buildConstraint(toConstraintInput(c.value), wasm));
            } catch (err) {
                wasmRefused.set(c.value.metadata?.name ?? "", `refused: ${(err as Error).message}`);
            }
        }
        byWasm = messagesByPair(objects, evaluate(objects, built, synced, { inventory }));
    }
    const nsLabels = namespaceLabelsOf([...p.group.inventory, ...objects]);
    for (const c of p.constraints) {
        const name = c.value.metadata?.name ?? "";
        const generated = generateAdmissionPolicies([c.built]);
        for (const o of p.objects) {
            const k = key(objectKey(o.value), name);
            const g = [...(byGator.get(k) ?? [])].sort();
            const mine = [...(byPack.get(k) ?? [])].sort();
            const diff = (gatorSide: string[], packSide: string[]): Difference => ({
                group: p.group.id,
                object: objectKey(o.value),
                objectOps: o.ops,
                constraint: `${c.value.kind}/${name}`,
                constraintOps: c.ops,
                gator: gatorSide,
                pack: packSide,
            });
            if (o.mutant || c.mutant) {
                if (JSON.stringify(g) === JSON.stringify(mine)) report.agree++;
                else report.differ.push(diff(g, mine));
                if (byWasm) {
                    const refused = wasmRefused.get(name);
                    const theirs = refused ? [refused] : [...(byWasm.get(k) ?? [])].sort();
                    if (JSON.stringify(g) === JSON.stringify(theirs)) report.wasmAgree++;
                    else report.wasmDiffer.push({ ...diff(g, theirs), judge: "wasm" });
                }
            }
            // Admission never sees nulls (the decoded copy stands for the object there); templates
            // that compare objects with others have no admission rule (docs/admission.md).
            if (holdsNull(o.value) || !admissionRules.has(c.built.kind)) continue;
            if (generated.policies.length === 0) {
                if (g.length === 0) report.admissionAgree++;
                else report.admissionDiffer.push(diff(g, [`admitted: no admission policy (${generated.skipped.map((s) => s.reason).join("; ")})`]));
                continue;
            }
            const outcome = admit(generated.policies[0], generated.bindings[0], o.value, nsLabels);
            const refused = outcome.failed.length > 0 || outcome.errors.length > 0;
            if (refused === g.length > 0) report.admissionAgree++;
            else report.admissionDiffer.push(diff(g, [refused ? `refused: ${[...outcome.failed, ...outcome.errors].join(" | ")}` : "admitted"]));
        }
    }
}

export function libraryGroups(library: Library, perCase: number): Group[] {
    return library.cases.map((c) => ({
        id: c.id,
        constraints: [c.constraint],
        objects: [c.object],
        inventory: c.inventory,
        objectMutants: perCase,
        constraintMutants: 3,
    }));
}

function readDocs(file: string): K8sObject[] {
    return parseAllDocuments(readFileSync(file, "utf8"))
        .map((d) => d.toJS())
        .filter((d): d is K8sObject => d !== null && typeof d === "object");
}

/** The rendered objects of a stack (npm run render, into a temporary folder) and its constraints. */
function stackGroup(stack: string, perObject: number): Group {
    const out = mkdtempSync(path.join(tmpdir(), `gatekeeper-render-${stack}-`));
    try {
        const r = spawnSync("npm", ["run", "-s", "render", "--", "--stack", stack, "--out", path.join(out, "render")], { cwd: REPO, encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
        if (r.status !== 0) throw new Error(`render of stack ${stack} failed (exit ${r.status}): ${(r.stderr || r.stdout).slice(-2000)}`);
        const objects = readDocs(path.join(out, "render", "manifests.yaml"));
        const constraints = readDocs(path.join(REPO, "policies", "constraints", `${stack}.yaml`)).filter((d) => d.apiVersion?.startsWith("constraints.gatekeeper.sh/"));
        return { id: `stack ${stack}`, constraints, objects, inventory: [], objectMutants: perObject, constraintMutants: 2 };
    } finally {
        rmSync(out, { recursive: true, force: true });
    }
}

export interface Options {
    library: string;
    seeds: number[];
    mutants: number;
    stacks: string[];
    gator: string;
    show: number;
    /** Seconds one gator run may take (a stack batch holds thousands of objects). */
    gatorTimeout: number;
    /** Object mutants per base object of each test template (0: the test templates are not judged). */
    customMutants: number;
    /** The opa that compiles the library's Rego for the Wasm judge ("" for the default; "none": no Wasm judge). */
    opa: string;
    /** Which compiled form of the library's Rego the third judge runs (plan, the pack's engine, by default). */
    engine?: Engine;
    /** Object mutants per base object of each template of issue 43's team corpus (0: not judged; needs opa). */
    teamMutants: number;
}

function ensureGator(explicit: string | undefined): string {
    if (explicit) return explicit;
    const build = path.join(__dirname, "build.sh");
    const where = spawnSync("bash", [build, "--path"], { encoding: "utf8" }).stdout.trim();
    if (existsSync(where)) return where;
    console.log(`gatekeeper: gator is not in the tool cache (${where}); building it from the Go module proxy (about 10 min on 2 cores)`);
    const r = spawnSync("bash", [build, "gator"], { stdio: "inherit" });
    if (r.status !== 0 || !existsSync(where)) throw new Error(`building gator failed (bash ${path.relative(REPO, build)} gator)`);
    return where;
}

export function emptyReport(seed: number): SeedReport {
    return { seed, objectMutants: 0, constraintMutants: 0, refusedObjects: 0, refusedConstraints: 0, agree: 0, differ: [], admissionAgree: 0, admissionDiffer: [], gatorRuns: 0, gatorSeconds: 0, wasmAgree: 0, wasmDiffer: [] };
}

/** The library's cases and the stacks, judged by gator, the pack and (given `wasm`) the Wasm engine. */
export function runSeed(opts: Options, library: Library, stackGroups: Group[], seed: number, log: (l: string) => void, wasm?: TemplateRegistry): SeedReport {
    const report = emptyReport(seed);
    const pool = new ValuePool();
    for (const c of library.cases) [c.object, c.constraint, ...c.inventory].forEach((o) => pool.add(o));
    for (const g of stackGroups) [...g.objects, ...g.constraints].forEach((o) => pool.add(o));
    const stackObjects = stackGroups.reduce((n, g) => n + g.objects.length, 0);
    // About three quarters of the mutants from the library's cases, the rest from the stacks.
    const libraryShare = stackObjects > 0 ? 0.75 : 1;
    const perCase = Math.ceil((opts.mutants * libraryShare) / library.cases.length / 0.97);
    const perObject = stackObjects > 0 ? Math.ceil((opts.mutants * (1 - libraryShare)) / stackObjects / 0.9) : 0;
    const groups = [...libraryGroups(library, perCase), ...stackGroups.map((g) => ({ ...g, objectMutants: perObject }))];
    const t0 = Date.now();
    const prepared = prepare(groups, seed, pool, report);
    log(`gatekeeper: seed ${seed}: ${report.objectMutants} admissible object mutants (${report.refusedObjects} refused by the strict check), ${report.constraintMutants} parameter mutants (${report.refusedConstraints} refused by the pack's schema check) in ${((Date.now() - t0) / 1000).toFixed(0)} s`);
    prepared.forEach((p, i) => {
        judge(opts.gator, library.templates, p, report, opts.gatorTimeout, wasm);
        if ((i + 1) % 50 === 0) log(`gatekeeper: seed ${seed}: ${i + 1}/${prepared.length} groups, ${report.agree} agree, ${report.differ.length} differ${wasm ? `; wasm ${report.wasmAgree} agree, ${report.wasmDiffer.length} differ` : ""}`);
    });
    return report;
}

/**
 * The test templates (a team's own, tools/gatekeeper/customTemplates.ts) on their own mutants:
 * gator against the pack, which judges them by their Wasm modules. Its own value pool and random
 * stream, so the library's mutants of a seed stay what they were.
 */
export function runCustomSeed(opts: Options, custom: CustomTemplates, library: Library, seed: number): SeedReport {
    const report = emptyReport(seed);
    const groups = custom.groups(opts.customMutants);
    const pool = new ValuePool();
    for (const c of library.cases) [c.object, c.constraint, ...c.inventory].forEach((o) => pool.add(o));
    for (const g of groups) [...g.objects, ...g.constraints].forEach((o) => pool.add(o));
    for (const p of prepare(groups, seed, pool, report)) judge(opts.gator, custom.templates, p, report, opts.gatorTimeout);
    return report;
}

/**
 * Issue 43's team-template corpus (./teamCorpus.ts) on its own mutants: gator against the pack's
 * team-template path; the agreement of each template, for the per-class lines.
 */
export function runTeamSeed(opts: Options, team: TeamCorpus, library: Library, seed: number): { report: SeedReport; byKind: Map<string, { agree: number; differ: number; classes: number[] }> } {
    const report = emptyReport(seed);
    const groups = team.groups(opts.teamMutants);
    const pool = new ValuePool();
    for (const c of library.cases) [c.object, c.constraint, ...c.inventory].forEach((o) => pool.add(o));
    for (const g of groups) [...g.objects, ...g.constraints].forEach((o) => pool.add(o));
    const byKind = new Map<string, { agree: number; differ: number; classes: number[] }>();
    for (const p of prepare(groups, seed, pool, report)) {
        const g = p.group as (typeof groups)[number];
        const [agree, differ] = [report.agree, report.differ.length];
        judge(opts.gator, team.templates, p, report, opts.gatorTimeout);
        const k = byKind.get(g.kind) ?? { agree: 0, differ: 0, classes: g.classes };
        k.agree += report.agree - agree;
        k.differ += report.differ.length - differ;
        byKind.set(g.kind, k);
    }
    return { report, byKind };
}

function formatDifference(d: Difference): string {
    return [
        `DIFF ${d.group}: ${d.object} × ${d.constraint}`,
        ...(d.objectOps ? [`  object: ${d.objectOps}`] : []),
        ...(d.constraintOps ? [`  constraint: ${d.constraintOps}`] : []),
        `  gator: ${d.gator.length ? d.gator.map((m) => JSON.stringify(m)).join(", ") : "(none)"}`,
        `  ${d.judge === "wasm" ? "wasm: " : "pack: "} ${d.pack.length ? d.pack.map((m) => JSON.stringify(m)).join(", ") : "(none)"}`,
    ].join("\n");
}

/** Differences grouped by constraint kind and the shape of the change, for a readable summary. */
function classes(diffs: readonly Difference[]): Map<string, number> {
    const out = new Map<string, number>();
    for (const d of diffs) {
        const k = d.constraint.split("/")[0];
        out.set(k, (out.get(k) ?? 0) + 1);
    }
    return new Map([...out.entries()].sort((a, b) => b[1] - a[1]));
}

export function parseArgs(argv: string[], env = process.env): Options | string {
    const arg = (name: string) => {
        const i = argv.indexOf(name);
        return i >= 0 ? argv[i + 1] : undefined;
    };
    const library = arg("--library") ?? env.GATEKEEPER_LIBRARY ?? "";
    const seeds = (arg("--seeds") ?? "1,2").split(",").map(Number);
    if (seeds.some((s) => !Number.isInteger(s))) return `--seeds must be integers separated by commas, got ${arg("--seeds")}`;
    const mutants = Number(arg("--mutants") ?? 20000);
    if (!Number.isInteger(mutants) || mutants < 1) return `--mutants must be a positive integer, got ${arg("--mutants")}`;
    const stacksArg = arg("--stacks") ?? "dev,prod";
    const stacks = stacksArg === "none" ? [] : stacksArg.split(",");
    const show = Number(arg("--show") ?? 20);
    const gatorTimeout = Number(arg("--gator-timeout") ?? 1800);
    if (!Number.isFinite(gatorTimeout) || gatorTimeout <= 0) return `--gator-timeout must be a positive number of seconds, got ${arg("--gator-timeout")}`;
    const customMutants = Number(arg("--custom-mutants") ?? 100);
    if (!Number.isInteger(customMutants) || customMutants < 0) return `--custom-mutants must be a whole number, got ${arg("--custom-mutants")}`;
    const teamMutants = Number(arg("--team-mutants") ?? 100);
    if (!Number.isInteger(teamMutants) || teamMutants < 0) return `--team-mutants must be a whole number, got ${arg("--team-mutants")}`;
    let engine: Engine;
    try {
        engine = engineFlag(argv);
    } catch (err) {
        return (err as Error).message;
    }
    return { library, seeds, mutants, stacks, gator: arg("--gator") ?? "", show, gatorTimeout, customMutants, opa: arg("--opa") ?? "", engine, teamMutants };
}

export function main(argv: string[], log = (l: string) => console.log(l)): number {
    const opts = parseArgs(argv);
    if (typeof opts === "string") {
        console.error(`gatekeeper: ${opts}`);
        return 2;
    }
    if (!opts.library) {
        log("gatekeeper: skipped: no Gatekeeper library given (--library DIR or GATEKEEPER_LIBRARY: a checkout of open-policy-agent/gatekeeper-library at the commit in ../shared/conformance/gatekeeper/cases.json)");
        return 0;
    }
    if (!existsSync(STRICT_CHECK)) {
        console.error(`gatekeeper: ${STRICT_CHECK} is missing: the schema check needs ../shared`);
        return 2;
    }
    let total = { agree: 0, differ: 0, admissionAgree: 0, admissionDiffer: 0, wasmAgree: 0, wasmDiffer: 0, customAgree: 0, customDiffer: 0, teamAgree: 0, teamDiffer: 0 };
    let wasmJudged = false;
    try {
        const library = readLibrary(opts.library);
        opts.gator = ensureGator(opts.gator || undefined);
        let wasm: TemplateRegistry | undefined;
        if (opts.opa !== "none") {
            const opa = opaPath(opts.opa || undefined);
            if (!existsSync(opa)) throw new Error(`opa is not at ${opa}: the Wasm judge compiles the library's Rego with it (npm run gatekeeper:build -- opa; --opa none judges without Wasm)`);
            const compiled = wasmLibraryRegistry(library.templates, opa, log, opts.engine);
            log(`wasm: the third judge runs the library's Rego as ${opts.engine === "plan" ? "plans compiled to JavaScript (the pack's engine for a team's templates)" : "Wasm modules"}`);
            if (compiled.refused.size > 0) throw new Error(`the Wasm judge could not load ${[...compiled.refused.keys()].join(", ")}`);
            wasm = compiled.registry;
            wasmJudged = true;
        }
        const custom = opts.customMutants > 0 ? customTemplates() : undefined;
        if (custom) {
            log(`custom: ${custom.refusal.ok ? "refused as it must be" : "NOT refused as it must be"}: ${custom.refusal.message}`);
            if (!custom.refusal.ok) total.customDiffer++;
        }
        let team: TeamCorpus | undefined;
        if (opts.teamMutants > 0) {
            const opa = opaPath(opts.opa && opts.opa !== "none" ? opts.opa : undefined);
            if (!existsSync(opa)) throw new Error(`opa is not at ${opa}: the team corpus is compiled with it (npm run gatekeeper:build -- opa; --team-mutants 0 leaves the corpus out)`);
            team = teamCorpus(opa, log);
            for (const l of team.lines) {
                log(`team: class ${l.cls} (${CLASSES[l.cls]}): ${l.ok ? "ok" : "FAILED"}: ${l.text}`);
                if (!l.ok) total.teamDiffer++;
            }
        }
        const stacks = opts.stacks.map((s) => stackGroup(s, 1));
        for (const seed of opts.seeds) {
            const r = runSeed(opts, library, stacks, seed, log, wasm);
            for (const d of r.differ.slice(0, opts.show)) log(formatDifference(d));
            for (const d of r.wasmDiffer.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "WASM DIFF"));
            for (const d of r.admissionDiffer.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "ADMISSION DIFF"));
            const byKind = [...classes(r.differ)].map(([k, n]) => `${k} ${n}`).join(", ");
            const wasmByKind = [...classes(r.wasmDiffer)].map(([k, n]) => `${k} ${n}`).join(", ");
            const admByKind = [...classes(r.admissionDiffer)].map(([k, n]) => `${k} ${n}`).join(", ");
            log(
                `gatekeeper: seed ${seed}: ${r.objectMutants + r.constraintMutants} mutants (${r.objectMutants} objects, ${r.constraintMutants} parameter sets), ${r.agree + r.differ.length} judgements, ` +
                    `pack ${r.agree} agree, ${r.differ.length} differ${byKind ? ` (${byKind})` : ""}; ` +
                    (wasm ? `wasm ${r.wasmAgree} agree, ${r.wasmDiffer.length} differ${wasmByKind ? ` (${wasmByKind})` : ""}; ` : "") +
                    `admission ${r.admissionAgree} agree, ${r.admissionDiffer.length} differ${admByKind ? ` (${admByKind})` : ""}; gator ${r.gatorRuns} runs, ${r.gatorSeconds.toFixed(0)} s`,
            );
            total = { ...total, agree: total.agree + r.agree, differ: total.differ + r.differ.length, admissionAgree: total.admissionAgree + r.admissionAgree, admissionDiffer: total.admissionDiffer + r.admissionDiffer.length, wasmAgree: total.wasmAgree + r.wasmAgree, wasmDiffer: total.wasmDiffer + r.wasmDiffer.length };
            if (custom) {
                const c = runCustomSeed(opts, custom, library, seed);
                for (const d of c.differ.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "CUSTOM DIFF"));
                const cByKind = [...classes(c.differ)].map(([k, n]) => `${k} ${n}`).join(", ");
                log(`custom: seed ${seed}: ${c.objectMutants} object and ${c.constraintMutants} parameter mutants of ${custom.templates.size} test templates: gator and the pack (CEL, or Rego compiled: plan or Wasm) ${c.agree} agree, ${c.differ.length} differ${cByKind ? ` (${cByKind})` : ""}; gator ${c.gatorRuns} runs`);
                total = { ...total, customAgree: total.customAgree + c.agree, customDiffer: total.customDiffer + c.differ.length };
            }
            if (team) {
                const { report: t, byKind } = runTeamSeed(opts, team, library, seed);
                for (const d of t.differ.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "TEAM DIFF"));
                for (const cls of Object.keys(CLASSES).map(Number)) {
                    const kinds = [...byKind].filter(([, k]) => k.classes.includes(cls));
                    if (kinds.length === 0) continue;
                    const agree = kinds.reduce((n, [, k]) => n + k.agree, 0);
                    const differ = kinds.reduce((n, [, k]) => n + k.differ, 0);
                    log(`team: seed ${seed}: class ${cls} (${CLASSES[cls]}): ${agree} agree, ${differ} differ (${kinds.map(([kind]) => kind).join(", ")})`);
                }
                log(`team: seed ${seed}: ${t.objectMutants} object and ${t.constraintMutants} parameter mutants of ${team.templates.size} corpus templates: gator and the pack ${t.agree} agree, ${t.differ.length} differ; gator ${t.gatorRuns} runs`);
                total = { ...total, teamAgree: total.teamAgree + t.agree, teamDiffer: total.teamDiffer + t.differ.length };
            }
        }
    } catch (err) {
        console.error(`gatekeeper: ${(err as Error).message}`);
        return 2;
    }
    log(`admission: ${total.admissionAgree} agree, ${total.admissionDiffer} differ`);
    log(wasmJudged ? `wasm: ${total.wasmAgree} agree, ${total.wasmDiffer} differ` : "wasm: not judged (--opa none)");
    if (opts.customMutants > 0) log(`custom: ${total.customAgree} agree, ${total.customDiffer} differ`);
    if (opts.teamMutants > 0) log(`team: ${total.teamAgree} agree, ${total.teamDiffer} differ`);
    log(`gatekeeper: ${total.agree} agree, ${total.differ} differ`);
    return total.differ + total.admissionDiffer + total.wasmDiffer + total.customDiffer + total.teamDiffer > 0 ? 1 : 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
