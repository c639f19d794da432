/**
 * The library's templates on the Wasm path as a second engine beside the TypeScript one:
 *
 *   npm run gatekeeper:wasm-agree -- --library DIR [--engine plan|wasm] [--opa BIN] [--show 20] [--seeds 1,2 --mutants 2000]
 *
 * --engine: the compiled form judged: plan (the default: the plan compiled to JavaScript, what
 * the pack runs for a team's templates) or wasm (the Wasm module, the pack's fallback).
 *
 * DIR is a checkout of the Gatekeeper library (GATEKEEPER_LIBRARY; the commit
 * ../shared/conformance/gatekeeper names). Each template's Rego is compiled by opa (the version
 * Gatekeeper vendors) into the tool cache ($OPS_E2E_CACHE/gatekeeper-wasm, never into the project:
 * the library's Rego is read beside it), then every case of every suite is judged by both
 * engines through the same engine (match, expansion, inventory): the violation messages must be
 * the same multiset. With --mutants, also the admissible mutants `npm run test:gatekeeper` makes of
 * those cases (its prepare(): the same seeds give the same mutants), every (object, constraint)
 * pair. Prints the differences and `wasm: N agree, N differ`; exit 1 on any difference.
 */
import { existsSync } from "node:fs";
import { buildConstraint, evaluate, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import { templateRegistry } from "../../policies/gatekeeper/templates";
import { libraryGroups } from "./groups";
import { normalizeMessage } from "./judge";
import { inNamespace, prepare, toConstraintInput } from "./mutants";
import { emptyReport } from "./report";
import { ValuePool } from "./mutate";
import { readLibrary, type LibraryCase } from "./library";
import { opaPath } from "./wasm";
import { engineFlag, syncAll, wasmLibraryRegistry, type Engine } from "./wasmLibrary";

/** Milliseconds spent in evaluate() per engine (start-up of the Wasm modules is reported apart). */
const spent = { typescript: 0, wasm: 0 };

function timed<T>(engine: keyof typeof spent, f: () => T): T {
    const t0 = performance.now();
    try {
        return f();
    } finally {
        spent[engine] += performance.now() - t0;
    }
}

function messagesOf(c: LibraryCase, registry: TemplateRegistry, synced: boolean): string[] {
    const constraint = buildConstraint(toConstraintInput(c.constraint), registry);
    const object = inNamespace(c.object);
    const inventory = [...c.inventory.map(inNamespace), object];
    const config = synced ? syncAll(inventory) : undefined;
    return timed(synced ? "wasm" : "typescript", () => evaluate([object], [constraint], config, { inventory }))
        .map((r) => normalizeMessage(r.message))
        .sort();
}

/** Every (object, constraint) pair of the admissible mutants of the library's cases, judged by both engines. */
function judgeMutants(library: ReturnType<typeof readLibrary>, registry: TemplateRegistry, seed: number, mutants: number, differ: string[], log: (l: string) => void): number {
    const report = emptyReport(seed);
    const pool = new ValuePool();
    for (const c of library.cases) [c.object, c.constraint, ...c.inventory].forEach((o) => pool.add(o));
    const prepared = prepare(libraryGroups(library, Math.ceil(mutants / library.cases.length / 0.97)), seed, pool, report);
    log(`wasm: seed ${seed}: ${report.objectMutants} admissible object mutants, ${report.constraintMutants} parameter mutants`);
    let agree = 0;
    for (const p of prepared) {
        const objects = p.objects.map((o) => o.value);
        const inventory = [...p.group.inventory.map(inNamespace), ...objects];
        const byPair = (rs: ReturnType<typeof evaluate>) => {
            const m = new Map<string, string[]>();
            for (const r of rs) {
                const k = `${r.objectIndex}\u0000${r.constraintName}`;
                m.set(k, [...(m.get(k) ?? []), normalizeMessage(r.message)]);
            }
            return m;
        };
        const ts = byPair(timed("typescript", () => evaluate(objects, p.constraints.map((c) => c.built), undefined, { inventory })));
        let wasmConstraints;
        try {
            wasmConstraints = p.constraints.map((c) => buildConstraint(toConstraintInput(c.value), registry));
        } catch (err) {
            differ.push(`${p.group.id} (seed ${seed}): the Wasm template refused parameters the TypeScript one accepts: ${(err as Error).message}`);
            continue;
        }
        const synced = syncAll(inventory);
        const wasm = byPair(timed("wasm", () => evaluate(objects, wasmConstraints, synced, { inventory })));
        objects.forEach((o, i) =>
            p.constraints.forEach((c) => {
                const k = `${i}\u0000${c.value.metadata?.name}`;
                const a = JSON.stringify((ts.get(k) ?? []).sort());
                const b = JSON.stringify((wasm.get(k) ?? []).sort());
                if (a === b) agree++;
                else differ.push(`${p.group.id} (seed ${seed}) object ${p.objects[i].ops || "(base)"} × ${c.value.metadata?.name} ${c.ops}:\n  typescript: ${a}\n  wasm:       ${b}`);
            }),
        );
    }
    return agree;
}

export function main(argv: string[], log = (l: string) => console.log(l)): number {
    const at = (flag: string) => (argv.indexOf(flag) >= 0 ? argv[argv.indexOf(flag) + 1] : undefined);
    const root = at("--library") ?? process.env.GATEKEEPER_LIBRARY;
    const show = Number(at("--show") ?? 20);
    if (!root) {
        log("wasm: skipped: no --library DIR (a checkout of open-policy-agent/gatekeeper-library)");
        return 0;
    }
    const opa = opaPath(at("--opa"));
    if (!existsSync(opa)) {
        log(`wasm: opa is not at ${opa}; build it with: npm run gatekeeper:build -- opa`);
        return 2;
    }
    let engine: Engine;
    try {
        engine = engineFlag(argv);
    } catch (err) {
        log(`wasm: ${(err as Error).message}`);
        return 2;
    }
    const library = readLibrary(root);
    const t0 = Date.now();
    const { registry, refused } = wasmLibraryRegistry(library.templates, opa, log, engine);
    log(`wasm: judged by ${engine === "plan" ? "the plans compiled to JavaScript (the pack's engine)" : "the Wasm modules"}`);
    const startup = Date.now() - t0;
    log(`wasm: ${registry.size} of ${library.templates.size} library templates compiled and loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
    let agree = 0;
    const differ: string[] = [];
    for (const c of library.cases) {
        if (refused.has(c.templateKind)) {
            differ.push(`${c.id}: template refused: ${refused.get(c.templateKind)}`);
            continue;
        }
        let ts: string[] | string;
        let wasm: string[] | string;
        try {
            ts = messagesOf(c, templateRegistry, false);
        } catch (err) {
            ts = `error: ${(err as Error).message}`;
        }
        try {
            wasm = messagesOf(c, registry, true);
        } catch (err) {
            wasm = `error: ${(err as Error).message}`;
        }
        if (JSON.stringify(ts) === JSON.stringify(wasm)) agree++;
        else differ.push(`${c.id}:\n  typescript: ${JSON.stringify(ts)}\n  wasm:       ${JSON.stringify(wasm)}`);
    }
    log(`wasm: library cases: ${agree} agree, ${differ.length} differ (${library.cases.length} cases)`);
    const mutants = Number(at("--mutants") ?? 0);
    if (mutants > 0) {
        for (const seed of (at("--seeds") ?? "1,2").split(",").map(Number)) {
            const before = differ.length;
            const t1 = Date.now();
            const n = judgeMutants(library, registry, seed, mutants, differ, log);
            agree += n;
            log(`wasm: seed ${seed}: ${n} (object, constraint) pairs agree, ${differ.length - before} differ (${((Date.now() - t1) / 1000).toFixed(0)} s)`);
        }
    }
    for (const d of differ.slice(0, show)) log(d);
    log(`wasm: evaluation time: typescript ${spent.typescript.toFixed(0)} ms, ${engine} ${spent.wasm.toFixed(0)} ms (+ ${startup} ms loading the 49 templates)`);
    log(`wasm: ${agree} agree, ${differ.length} differ`);
    return differ.length > 0 ? 1 : 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
