/**
 * The compiled-Rego part of `npm run bench`: the prod stack's Gatekeeper constraints
 * (policies/constraints/prod.yaml; its Config syncs into data.inventory the kinds the library's
 * referential templates read, which compiled Rego reads there as on a cluster) over the rendered
 * prod stack and over 10,000 synthetic resources, judged by the library's templates in
 * TypeScript and by the library's own Rego compiled as the pack compiles a team's templates
 * (tools/gatekeeper/wasm-agree.ts compiles it into the tool cache): its plan compiled to
 * JavaScript (what the pack runs) and its Wasm module (the pack's fallback), start-up included:
 * for each path the constraint set is loaded (for compiled Rego: the templates the constraints
 * use, checked against their digests, their compiled files loaded) and the objects judged, in a
 * fresh registry every run; and for the plan path, cold starts, each path in processes of its own
 * (what a pulumi preview pays), without the plans' code cache (a first preview) and with the one
 * an earlier process wrote (every later one). Needs the Gatekeeper library (--library DIR or
 * GATEKEEPER_LIBRARY) and opa; without them it says so and skips.
 *
 *   npx tsx tools/bench/wasmTemplates.ts --library DIR [--runs 5]
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { render } from "../../cli/harness/render";
import { constraintSetFromObjects, createEvaluator, createTemplateRegistry, parseConstraintObjects, requireConstraints, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import { templateRegistry } from "../../policies/gatekeeper/templates";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { stackResourcesOf } from "../../policies/pack/render";
import type { PackResource } from "../../policies/pack/resources";
import { viewOf } from "../../policies/pack/rule";
import { PACK_DIR } from "../../policies/pack/paths";
import { readLibrary } from "../gatekeeper/library";
import { opaPath } from "../gatekeeper/wasm";
import { syncOnlyOf, WASM_LIBRARY_DIR, wasmLibraryRegistry, type Engine } from "../gatekeeper/wasmLibrary";
import { forgetCompiledPlans } from "../../policies/gatekeeper/plan/compile";
import { loadWasmTemplate } from "../../policies/gatekeeper/wasm/rule";
import { median, syntheticResources } from "./policyPack";

/** The goal of issue 32: compiled Rego within 2x the TypeScript templates, start-up included. */
export const WASM_TARGET_RATIO = 2;

/** Runs after the first, not counted in the plan path's warm figures (V8's tiering of the generated functions). */
export const PLAN_WARMUP_RUNS = 10;

export interface WasmFigure {
    label: string;
    /** The compiled form measured: the plan compiled to JavaScript (the pack's) or the Wasm module. */
    engine: Engine;
    resources: number;
    violations: number;
    /** Medians over the runs (each: load the constraint set, the templates it uses, judge every object). */
    typescript: { wallMs: number; cpuMs: number };
    wasm: { wallMs: number; cpuMs: number; startupMs: number };
    /** The first run of the process, the templates loaded from their files (cold start). */
    wasmFirstWallMs: number;
    /** Of the first run, loading the constraint set and the templates. */
    wasmFirstStartupMs: number;
    /** The first TypeScript run of the process (its warm-up). */
    typescriptFirstWallMs: number;
    /** Compiled-Rego CPU time over TypeScript CPU time (medians). */
    ratio: number;
    /** Cold starts, each path in processes of its own (what a pulumi preview pays): medians of the wall time from loading the constraint set to the last verdict. */
    cold?: ColdFigure;
    /** The same, the plans' bytecode taken from the code cache an earlier process wrote (what every preview after the first pays; policies/gatekeeper/plan/compile.ts). */
    coldCached?: ColdFigure;
}

/**
 * The kinds the prod constraints' referential library templates read from data.inventory (their
 * Rego: k8shorizontalpodautoscaler the HPAs' scaleTargetRef kinds, k8spoddisruptionbudget
 * policy/v1 PodDisruptionBudget, k8sstorageclass storage.k8s.io/v1 StorageClass,
 * k8suniqueingresshost Ingress, k8suniqueserviceselector Service), as a Config would sync them.
 */
export function referentialSync(objects: readonly K8sObject[]): { group: string; version: string; kind: string }[] {
    const read = new Set(["policy/v1/PodDisruptionBudget", "storage.k8s.io/v1/StorageClass", "/Ingress", "/Service"]);
    for (const o of objects) {
        const ref = o.kind === "HorizontalPodAutoscaler" ? o.spec?.scaleTargetRef : undefined;
        if (ref?.apiVersion && ref.kind) read.add(`${ref.apiVersion}/${ref.kind}`);
    }
    return syncOnlyOf(objects).filter((k) => read.has(`${k.group ? `${k.group}/` : ""}${k.version}/${k.kind}`) || read.has(`/${k.kind}`));
}

/** CPU milliseconds of this process (user + system): on a shared, loaded machine, steadier than wall time. */
function cpuMs(): number {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1000;
}

function judge(constraintsText: string, syncOnly: unknown, registry: () => TemplateRegistry, objects: readonly K8sObject[]): { startupMs: number; totalMs: number; cpuMs: number; violations: number } {
    const c0 = cpuMs();
    const t0 = performance.now();
    const docs = parseConstraintObjects(constraintsText, "constraints/prod.yaml") as K8sObject[];
    for (const d of docs) if (d.kind === "Config") d.spec = { ...d.spec, sync: { syncOnly } };
    const set = requireConstraints(constraintSetFromObjects(docs, registry(), "constraints/prod.yaml"), "constraints/prod.yaml");
    const evaluator = createEvaluator(set.constraints, set.config);
    const t1 = performance.now();
    const results = evaluator.evaluate(objects);
    const t2 = performance.now();
    return { startupMs: t1 - t0, totalMs: t2 - t0, cpuMs: cpuMs() - c0, violations: results.length };
}

export interface ColdFigure {
    typescriptMs: number;
    compiledMs: number;
    compiledStartupMs: number;
    runs: number;
    ratio: number;
}

/** What a cold-start process judges: written by the bench, read by the process (not timed). */
interface ColdInput {
    constraintsText: string;
    syncOnly: unknown;
    usedKinds: string[];
    objects: K8sObject[];
}

const compiledRegistryOf = (usedKinds: readonly string[], engine: Engine) => () =>
    createTemplateRegistry(usedKinds.map((kind) => loadWasmTemplate(path.join(WASM_LIBRARY_DIR, `${kind.toLowerCase()}.yaml`), `${kind} (library)`, { rego: true, engine })));

/** One cold start in this process (--cold PATH FILE): the constraint set loaded and the objects judged once; prints the figures as JSON. */
function coldStart(which: "typescript" | Engine, file: string): void {
    const input = JSON.parse(readFileSync(file, "utf8")) as ColdInput;
    const registry = which === "typescript" ? () => templateRegistry : compiledRegistryOf(input.usedKinds, which);
    const r = judge(input.constraintsText, input.syncOnly, registry, input.objects);
    console.log(JSON.stringify(r));
}

/**
 * Cold starts of the TypeScript templates and of one compiled form, alternating, each in a new
 * process: without the plans' code cache (a first preview), or (`cached`) with the cache one
 * earlier process wrote into a directory of this run (every later preview).
 */
function coldStarts(input: ColdInput, engine: Engine, runs: number, cached: boolean): ColdFigure {
    const dir = mkdtempSync(path.join(tmpdir(), "bench-cold-"));
    try {
        const file = path.join(dir, "input.json");
        writeFileSync(file, JSON.stringify(input));
        const env = { ...process.env, OPS_PLAN_CODE_CACHE: cached ? path.join(dir, "code-cache") : "off" };
        const once = (which: "typescript" | Engine) => {
            const r = spawnSync(process.execPath, ["--import", "tsx", __filename, "--cold", which, file], { encoding: "utf8", env });
            if (r.status !== 0) throw new Error(`cold start (${which}) failed: ${r.stderr}`);
            return JSON.parse(r.stdout.trim().split("\n").pop()!) as ReturnType<typeof judge>;
        };
        const ts: number[] = [];
        const compiled: number[] = [];
        const startup: number[] = [];
        // The process that writes the code cache (not counted).
        if (cached) once(engine);
        for (let i = 0; i < runs; i++) {
            const a = once("typescript");
            const b = once(engine);
            if (a.violations !== b.violations) throw new Error(`cold start: ${a.violations} violations from the TypeScript templates, ${b.violations} from compiled Rego`);
            ts.push(a.totalMs);
            compiled.push(b.totalMs);
            startup.push(b.startupMs);
        }
        const typescriptMs = median(ts);
        const compiledMs = median(compiled);
        return { typescriptMs, compiledMs, compiledStartupMs: median(startup), runs, ratio: compiledMs / typescriptMs };
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

export async function benchWasmTemplates(opts: { library?: string; runs?: number; synthetic?: number; opa?: string; log?: (line: string) => void } = {}): Promise<WasmFigure[]> {
    const log = opts.log ?? console.log;
    const root = opts.library ?? process.env.GATEKEEPER_LIBRARY;
    if (!root) {
        log("compiled Rego: skipped: no Gatekeeper library (--library DIR or GATEKEEPER_LIBRARY: a checkout of open-policy-agent/gatekeeper-library)");
        return [];
    }
    const opa = opaPath(opts.opa);
    if (!existsSync(opa)) {
        log(`compiled Rego: skipped: opa is not at ${opa} (npm run gatekeeper:build -- opa)`);
        return [];
    }
    const runs = opts.runs ?? 5;
    const library = readLibrary(root);
    // Compiles the library's Rego into the tool cache when stale (not timed: that is the build step).
    const compiled = wasmLibraryRegistry(library.templates, opa, log);
    if (compiled.refused.size > 0) throw new Error(`compiled Rego: ${compiled.refused.size} library templates refused`);
    const constraintsText = readFileSync(path.join(PACK_DIR, "constraints", "prod.yaml"), "utf8");
    // The templates the constraints use (as a team's folder holds the templates of its constraints), not all 49 of the library.
    const usedKinds = [...new Set((parseConstraintObjects(constraintsText, "constraints/prod.yaml") as K8sObject[]).map((d) => d.kind ?? "").filter((k) => k && k !== "Config"))];
    const compiledRegistry = (engine: Engine) => compiledRegistryOf(usedKinds, engine);

    const rendered = await render("prod");
    if (rendered.errors.length > 0) throw new Error(`the prod render failed: ${rendered.errors.join("; ")}`);
    const prod = stackResourcesOf(rendered);
    const objectsOf = (rs: PackResource[]) => viewOf(rs).objects.map((o) => o.object);
    const figures: WasmFigure[] = [];
    const names: Record<Engine, string> = { plan: "plan compiled to JavaScript (the pack's)", wasm: "Wasm module" };
    for (const engine of ["plan", "wasm"] as const) {
        for (const [label, resources] of [
            ["prod stack", prod],
            [`${opts.synthetic ?? 10_000} synthetic resources`, syntheticResources(prod, opts.synthetic ?? 10_000)],
        ] as const) {
            const objects = objectsOf(resources);
            const syncOnly = referentialSync(objects);
            const ts: { wall: number; cpu: number }[] = [];
            const wasm: { wall: number; cpu: number; startup: number }[] = [];
            let violations = -1;
            let wasmFirstWallMs = NaN;
            let wasmFirstStartupMs = NaN;
            let typescriptFirstWallMs = NaN;
            // Interleaved, after one warm-up of each (the compiled one is the cold start): the machine's load changes between runs.
            // The Wasm modules take seconds per run over the synthetic resources: fewer runs there.
            const n = engine === "wasm" && label !== "prod stack" ? Math.max(1, Math.ceil(runs / 3)) : runs;
            // V8 tiers the generated plan functions up over about ten runs (10,000 synthetic, CPU ms of runs 2-11 on a quiet
            // machine: 508, 338, 262, 203, 276, 138, 134, 183, 141, 140); those runs are not the warm figure. The first run
            // and the cold starts below are what a preview pays.
            const warmup = engine === "plan" ? PLAN_WARMUP_RUNS : 0;
            const registry = compiledRegistry(engine);
            // The first run compiles the plans, as the pack's process does on every pulumi preview (the cache step above compiled them already).
            forgetCompiledPlans();
            for (let i = 0; i <= n + warmup; i++) {
                const a = judge(constraintsText, syncOnly, () => templateRegistry, objects);
                const b = judge(constraintsText, syncOnly, registry, objects);
                if (a.violations !== b.violations) throw new Error(`${engine}: ${label}: ${a.violations} violations from the TypeScript templates, ${b.violations} from compiled Rego`);
                violations = a.violations;
                if (i === 0) {
                    wasmFirstWallMs = b.totalMs;
                    wasmFirstStartupMs = b.startupMs;
                    typescriptFirstWallMs = a.totalMs;
                    continue;
                }
                if (i <= warmup) continue;
                ts.push({ wall: a.totalMs, cpu: a.cpuMs });
                wasm.push({ wall: b.totalMs, cpu: b.cpuMs, startup: b.startupMs });
            }
            const typescript = { wallMs: median(ts.map((x) => x.wall)), cpuMs: median(ts.map((x) => x.cpu)) };
            const w = { wallMs: median(wasm.map((x) => x.wall)), cpuMs: median(wasm.map((x) => x.cpu)), startupMs: median(wasm.map((x) => x.startup)) };
            // The Wasm modules' cold starts are not measured: the pack runs a module only for a plan the compiler refuses.
            const coldInput = { constraintsText, syncOnly, usedKinds, objects: [...objects] };
            const cold = engine === "plan" ? coldStarts(coldInput, engine, runs, false) : undefined;
            const coldCached = engine === "plan" ? coldStarts(coldInput, engine, runs, true) : undefined;
            const f: WasmFigure = { label, engine, resources: resources.length, violations, typescript, wasm: w, wasmFirstWallMs, wasmFirstStartupMs, typescriptFirstWallMs, ratio: w.cpuMs / typescript.cpuMs, cold, coldCached };
            figures.push(f);
            log(
                `compiled Rego (${names[engine]}): ${f.label}: ${f.resources} resources, ${f.violations} violations, median of ${n}${warmup > 0 ? ` after ${warmup} warm-up runs` : ""}: TypeScript ${typescript.wallMs.toFixed(0)} ms (CPU ${typescript.cpuMs.toFixed(0)} ms; first run ${typescriptFirstWallMs.toFixed(0)} ms), ` +
                    `compiled ${w.wallMs.toFixed(0)} ms (CPU ${w.cpuMs.toFixed(0)} ms; ${w.startupMs.toFixed(0)} ms of it loading the constraints and templates; first run ${wasmFirstWallMs.toFixed(0)} ms, ${wasmFirstStartupMs.toFixed(0)} ms of it loading); ` +
                    `ratio ${f.ratio.toFixed(1)}x CPU (target <= ${WASM_TARGET_RATIO}x): ${f.ratio <= WASM_TARGET_RATIO ? "met" : "NOT met"}`,
            );
            for (const [what, c] of [
                ["cold start, each in a new process, no code cache (a first preview)", cold],
                ["cold start, each in a new process, the plans' code cache written by an earlier one (later previews)", coldCached],
            ] as const) {
                if (!c) continue;
                log(
                    `compiled Rego (${names[engine]}): ${f.label}: ${what}, median of ${c.runs}: TypeScript ${c.typescriptMs.toFixed(0)} ms, ` +
                        `compiled ${c.compiledMs.toFixed(0)} ms (${c.compiledStartupMs.toFixed(0)} ms of it loading); ratio ${c.ratio.toFixed(1)}x wall (target <= ${WASM_TARGET_RATIO}x): ${c.ratio <= WASM_TARGET_RATIO ? "met" : "NOT met"}`,
                );
            }
        }
    }
    return figures;
}

if (require.main === module) {
    const at = (flag: string) => (process.argv.indexOf(flag) >= 0 ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
    const cold = at("--cold");
    if (cold !== undefined) {
        if (cold !== "typescript" && cold !== "plan" && cold !== "wasm") throw new Error(`--cold must be typescript, plan or wasm, got ${cold}`);
        coldStart(cold, process.argv[process.argv.indexOf("--cold") + 2]);
    } else {
        benchWasmTemplates({ library: at("--library"), runs: at("--runs") ? Number(at("--runs")) : undefined, opa: at("--opa") }).catch((err) => {
            console.error(err);
            process.exitCode = 1;
        });
    }
}
