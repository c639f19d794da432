/**
 * Gatekeeper's own engine as the oracle (issue 21):
 *
 *   npm run test:gatekeeper -- --library DIR [--seeds 1,2] [--mutants 20000] [--stacks dev,prod] [--gator BIN] [--show 20] [--gator-timeout 1800]
 *                              [--opa BIN | --opa none] [--engine plan|wasm] [--custom-mutants 100] [--team-mutants 100]
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
 * Then issue 43's team corpus (./teamCorpus.ts, --team-mutants per base object; 0 leaves it out), its
 * lines per class.
 * Prints `admission:`, `wasm:`, `custom:`, `team:` and `gatekeeper: N agree, N differ`; exit 1 on any difference.
 *
 * This file is the command (its options, a seed's runs, what it prints); the parts: ./groups.ts
 * (what is judged), ./mutants.ts (the admissible mutants), ./judge.ts (gator against each judge),
 * ./report.ts (a seed's counts and differences), ./gator.ts (running gator).
 */
import { existsSync } from "node:fs";
import type { TemplateRegistry } from "../../policies/gatekeeper/engine";
import { customTemplates, type CustomTemplates } from "./customTemplates";
import { ensureGator } from "./gator";
import { libraryGroups, stackGroup, type Group } from "./groups";
import { judge } from "./judge";
import { readLibrary, type Library } from "./library";
import { ValuePool } from "./mutate";
import { prepare, STRICT_CHECK } from "./mutants";
import { emptyReport, type Difference, type SeedReport } from "./report";
import { CLASSES, teamCorpus, type TeamCorpus } from "./teamCorpus";
import { opaPath } from "./wasm";
import { engineFlag, wasmLibraryRegistry, type Engine } from "./wasmLibrary";

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

/** A value pool of the library's cases and of the groups' own objects and constraints, in that order. */
function poolOf(library: Library, groups: readonly Group[]): ValuePool {
    const pool = new ValuePool();
    for (const c of library.cases) [c.object, c.constraint, ...c.inventory].forEach((o) => pool.add(o));
    for (const g of groups) [...g.objects, ...g.constraints].forEach((o) => pool.add(o));
    return pool;
}

/** The library's cases and the stacks, judged by gator, the pack and (given `wasm`) the Wasm engine. */
function runSeed(opts: Options, library: Library, stackGroups: Group[], seed: number, log: (l: string) => void, wasm?: TemplateRegistry): SeedReport {
    const report = emptyReport(seed);
    const pool = poolOf(library, stackGroups);
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
function runCustomSeed(opts: Options, custom: CustomTemplates, library: Library, seed: number): SeedReport {
    const report = emptyReport(seed);
    const groups = custom.groups(opts.customMutants);
    const pool = poolOf(library, groups);
    for (const p of prepare(groups, seed, pool, report)) judge(opts.gator, custom.templates, p, report, opts.gatorTimeout);
    return report;
}

/**
 * Issue 43's team-template corpus (./teamCorpus.ts) on its own mutants: gator against the pack's
 * team-template path; the agreement of each template, for the per-class lines.
 */
function runTeamSeed(opts: Options, team: TeamCorpus, library: Library, seed: number): { report: SeedReport; byKind: Map<string, { agree: number; differ: number; classes: number[] }> } {
    const report = emptyReport(seed);
    const groups = team.groups(opts.teamMutants);
    const pool = poolOf(library, groups);
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

type Totals = Record<"agree" | "differ" | "admissionAgree" | "admissionDiffer" | "wasmAgree" | "wasmDiffer" | "customAgree" | "customDiffer" | "teamAgree" | "teamDiffer", number>;

/** What every seed is judged with, set up once. */
interface Judges {
    library: Library;
    /** The rendered stacks with their constraints. */
    stacks: Group[];
    /** The third judge: the library's Rego compiled (none with --opa none). */
    wasm?: TemplateRegistry;
    custom?: CustomTemplates;
    team?: TeamCorpus;
}

/**
 * Reads the library, finds gator, compiles the third judge and the team corpus, renders the
 * stacks; what the set-up itself finds wrong (a test template not refused, a corpus class) counts in `total`.
 */
function setUp(opts: Options, log: (l: string) => void, total: Totals): Judges {
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
    return { library, stacks, wasm, custom, team };
}

const byKindText = (diffs: readonly Difference[]) => [...classes(diffs)].map(([k, n]) => `${k} ${n}`).join(", ");

/** One seed of the library's cases and the stacks: its differences and its line. */
function librarySeed(opts: Options, judges: Judges, seed: number, log: (l: string) => void, total: Totals): void {
    const { wasm } = judges;
    const r = runSeed(opts, judges.library, judges.stacks, seed, log, wasm);
    for (const d of r.differ.slice(0, opts.show)) log(formatDifference(d));
    for (const d of r.wasmDiffer.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "WASM DIFF"));
    for (const d of r.admissionDiffer.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "ADMISSION DIFF"));
    const byKind = byKindText(r.differ);
    const wasmByKind = byKindText(r.wasmDiffer);
    const admByKind = byKindText(r.admissionDiffer);
    log(
        `gatekeeper: seed ${seed}: ${r.objectMutants + r.constraintMutants} mutants (${r.objectMutants} objects, ${r.constraintMutants} parameter sets), ${r.agree + r.differ.length} judgements, ` +
            `pack ${r.agree} agree, ${r.differ.length} differ${byKind ? ` (${byKind})` : ""}; ` +
            (wasm ? `wasm ${r.wasmAgree} agree, ${r.wasmDiffer.length} differ${wasmByKind ? ` (${wasmByKind})` : ""}; ` : "") +
            `admission ${r.admissionAgree} agree, ${r.admissionDiffer.length} differ${admByKind ? ` (${admByKind})` : ""}; gator ${r.gatorRuns} runs, ${r.gatorSeconds.toFixed(0)} s`,
    );
    total.agree += r.agree;
    total.differ += r.differ.length;
    total.admissionAgree += r.admissionAgree;
    total.admissionDiffer += r.admissionDiffer.length;
    total.wasmAgree += r.wasmAgree;
    total.wasmDiffer += r.wasmDiffer.length;
}

/** One seed of the Wasm host's test templates: its differences and its line. */
function customSeed(opts: Options, custom: CustomTemplates, library: Library, seed: number, log: (l: string) => void, total: Totals): void {
    const c = runCustomSeed(opts, custom, library, seed);
    for (const d of c.differ.slice(0, opts.show)) log(formatDifference(d).replace(/^DIFF/, "CUSTOM DIFF"));
    const cByKind = byKindText(c.differ);
    log(`custom: seed ${seed}: ${c.objectMutants} object and ${c.constraintMutants} parameter mutants of ${custom.templates.size} test templates: gator and the pack (CEL, or Rego compiled: plan or Wasm) ${c.agree} agree, ${c.differ.length} differ${cByKind ? ` (${cByKind})` : ""}; gator ${c.gatorRuns} runs`);
    total.customAgree += c.agree;
    total.customDiffer += c.differ.length;
}

/** One seed of issue 43's team corpus: its differences, a line per class and its line. */
function teamSeed(opts: Options, team: TeamCorpus, library: Library, seed: number, log: (l: string) => void, total: Totals): void {
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
    total.teamAgree += t.agree;
    total.teamDiffer += t.differ.length;
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
    const total: Totals = { agree: 0, differ: 0, admissionAgree: 0, admissionDiffer: 0, wasmAgree: 0, wasmDiffer: 0, customAgree: 0, customDiffer: 0, teamAgree: 0, teamDiffer: 0 };
    let wasmJudged = false;
    try {
        const judges = setUp(opts, log, total);
        wasmJudged = judges.wasm !== undefined;
        for (const seed of opts.seeds) {
            librarySeed(opts, judges, seed, log, total);
            if (judges.custom) customSeed(opts, judges.custom, judges.library, seed, log, total);
            if (judges.team) teamSeed(opts, judges.team, judges.library, seed, log, total);
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
