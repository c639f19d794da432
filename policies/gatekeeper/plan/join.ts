/**
 * Joins in a plan: a scan over the data document (with scans nested in it, over the elements it
 * finds) whose body goes on only where a value computed from the data equals a value fixed before
 * the scan, as in `other := data.inventory...[name]; flatten(other) == mine`. Run as written, every
 * review walks every synced object; the compiled code instead walks them once per data document,
 * keeping what the body computed from the data by that value (an index), and then visits only the
 * elements whose value equals the review's, in the order the scans would have reached them.
 *
 * That is the same evaluation where the skipped work cannot be seen, which this module checks
 * statement by statement before it calls a scan a join:
 *   - "data" statements (computed into the index) read only the data document, what the nest's
 *     scans found, and built-ins or functions that do not read the input; "probe" statements (run
 *     for each element found, in their order) may read anything set before the scan;
 *   - neither kind stops evaluation (no conflict can arise in them, nor in the functions they call),
 *     changes a collection it did not make, or leaves the innermost loop but by failing;
 *   - the locals they set are not read after the scan; the value compared is not set in it;
 *   - each nested scan is the last statement of its level, and the equality comes after the last.
 */
import { allStatements, breaksOut, MAKES, nestedBlocks, ownReads, ownWrites, type Block, type Func, type Operand, type Stmt } from "./ir";

/** A part of a level's body before the next level (or the equality): computed into the index (data) or for each element found (probe). */
export interface JoinPart {
    st: Stmt;
    data: boolean;
    /** A probe statement that reads nothing the nest sets (but what such probes set): run once, before the look-up. */
    hoist?: boolean;
}

export interface JoinSite {
    /** The nest's scans, outermost first; each but the last holds the next as the last statement of its body. */
    scans: Stmt[];
    /** Per scan: the statements of its body before the next scan (or the equality). */
    parts: JoinPart[][];
    /** The equality's operand set before the nest or by hoisted probes (the index is looked up by its value). */
    key: Operand;
    /** The equality's local set by data statements (the index is keyed by its value). */
    probe: number;
    /** The statements after the equality, run for each element found. */
    rest: Stmt[];
    /** The locals the data statements and the scans set, kept in the index for each element. */
    tuple: number[];
    /** The locals holding parts of the data document, set before the nest, that the data statements read. */
    free: number[];
}

/** What the analysis knows of the function the scan is in, and of the plan. */
export interface JoinContext {
    /** The locals that only ever hold parts of the data document (dataPathLocals). */
    dataOnly: ReadonlySet<number>;
    /** A function the plan defines, by name: whether it reads the input and whether it may stop evaluation; undefined for a built-in. */
    func(name: string): { readsInput: boolean; raiseFree: boolean } | undefined;
    /** Whether a local may be read after the scan (visitScans). */
    liveAfter(local: number): boolean;
}

/**
 * The locals of a function (params: its parameters; data is local 1) that only ever hold a part of
 * the data document found by fixed keys: data itself, a field of such a local by a string, a copy
 * of one. Their values at a point depend on the data document and the path taken to that point only.
 */
export function dataPathLocals(blocks: readonly Block[], params: readonly number[]): Set<number> {
    if (params[1] !== 1) return new Set();
    const writes = new Map<number, Stmt[]>();
    for (const st of allStatements(blocks)) for (const l of ownWrites(st)) listOf(writes, l).push(st);
    const fromLocal = (st: Stmt) => (st.type === "DotStmt" && st.stmt.key?.type === "string_index") || st.type === "AssignVarStmt";
    const out = new Set<number>([1]);
    for (const [l, sts] of writes) if (!params.includes(l) && sts.every((st) => st.type === "ResetLocalStmt" || (fromLocal(st) && st.stmt.source?.type === "local"))) out.add(l);
    for (let changed = true; changed; ) {
        changed = false;
        for (const [l, sts] of writes) {
            if (out.has(l) && !sts.every((st) => st.type === "ResetLocalStmt" || out.has(st.stmt.source.value))) {
                out.delete(l);
                changed = true;
            }
        }
    }
    return out;
}

/**
 * Whether each function may stop evaluation with a conflict (its own statements or the functions it
 * calls): not when it inserts into no object once, and each local it assigns once is either assigned
 * by one statement outside any scan, or reset before each of its assignments in the same top-level
 * block, or collects such assignments from definitions (top-level blocks) that exclude each other by
 * their guards (the planner's function of several definitions, as `f(x) = 1 { x == "" }` and
 * `f(x) = 2 { x != "" }`).
 */
export function raiseFreeFunctions(funcs: readonly Func[], funcIndex: ReadonlyMap<string, number>, literal: (o: Operand) => unknown): boolean[] {
    const own = funcs.map((f) => ownRaiseFree(f, literal));
    const calls = funcs.map((f) => [...allStatements(f.blocks)].flatMap((st) => (st.type === "CallStmt" && funcIndex.has(st.stmt.func) ? [funcIndex.get(st.stmt.func)!] : [])));
    const out = [...own];
    for (let changed = true; changed; ) {
        changed = false;
        funcs.forEach((_, i) => {
            if (out[i] && calls[i].some((c) => !out[c])) {
                out[i] = false;
                changed = true;
            }
        });
    }
    return out;
}

function ownRaiseFree(f: Func, literal: (o: Operand) => unknown): boolean {
    const inScan = new Set<Stmt>();
    const mark = (blocks: readonly Block[], under: boolean): void => {
        for (const b of blocks) {
            for (const st of b.stmts) {
                if (under) inScan.add(st);
                mark(nestedBlocks(st), under || st.type === "ScanStmt");
            }
        }
    };
    mark(f.blocks, false);
    const once = new Map<number, Stmt[]>();
    const written = new Map<number, Stmt[]>();
    for (const st of allStatements(f.blocks)) {
        if (st.type === "ObjectInsertOnceStmt" || st.type === "WithStmt" || st.type === "CallDynamicStmt") return false;
        if (st.type === "AssignVarOnceStmt") listOf(once, st.stmt.target).push(st);
        for (const l of ownWrites(st)) listOf(written, l).push(st);
    }
    // The top-level block of each top-level statement.
    const blockOf = new Map<Stmt, number>();
    f.blocks.forEach((b, i) => b.stmts.forEach((st) => blockOf.set(st, i)));
    /** Assigned once after a reset in the same top-level block, once per block: one value per run of the block. */
    const resetBefore = (t: number, st: Stmt): boolean => {
        const i = blockOf.get(st);
        if (i === undefined) return false;
        const stmts = f.blocks[i].stmts;
        const at = stmts.indexOf(st);
        return stmts.slice(0, at).some((s) => s.type === "ResetLocalStmt" && s.stmt.target === t) && stmts.filter((s) => s.type === "AssignVarOnceStmt" && s.stmt.target === t).length === 1;
    };
    for (const [t, sts] of once) {
        if (sts.some((st) => inScan.has(st))) return false;
        if ((written.get(t) ?? []).some((st) => st.type !== "ResetLocalStmt")) return false;
        if (sts.length === 1 || sts.every((st) => resetBefore(t, st))) continue;
        // Collected from definitions: each `t = r` the only assignment of t in its block, r assigned in the last block before that sets r.
        const definitions: number[] = [];
        for (const st of sts) {
            const i = blockOf.get(st);
            const src = st.stmt.source as Operand;
            if (i === undefined || src.type !== "local") return false;
            const r = src.value as number;
            const setsR = (blk: Block) => [...allStatements([blk])].some((x) => ownWrites(x).includes(r) || (x.type === "AssignVarOnceStmt" && x.stmt.target === r));
            if (setsR({ stmts: f.blocks[i].stmts.slice(0, f.blocks[i].stmts.indexOf(st)) })) return false;
            let d = i - 1;
            while (d >= 0 && !setsR(f.blocks[d])) d--;
            const def = d < 0 ? undefined : f.blocks[d].stmts.find((x) => x.type === "AssignVarOnceStmt" && x.stmt.target === r);
            if (def === undefined || !resetBefore(r, def) || definitions.includes(d)) return false;
            definitions.push(d);
        }
        const guards = definitions.map((d) => guardsOf(f, f.blocks[d], literal));
        for (let a = 0; a < guards.length; a++) for (let b = a + 1; b < guards.length; b++) if (!exclusive(guards[a], guards[b])) return false;
    }
    return true;
}

/** The list a map holds for a key, made when absent. */
function listOf<K, V>(map: Map<K, V[]>, key: K): V[] {
    let list = map.get(key);
    if (list === undefined) map.set(key, (list = []));
    return list;
}

type Guards = Map<string, { eq: unknown[]; ne: unknown[] }>;

/**
 * What a definition block requires of the function's parameters before it assigns: paths from a
 * parameter by string keys equal to, or unequal to, a literal (`==`, `!=`, and the built-ins equal
 * and neq whose result is required true). Only top-level statements: each one that fails ends the block.
 */
function guardsOf(f: Func, b: Block, literal: (o: Operand) => unknown): Guards {
    const path = new Map<number, string>(f.params.map((p, i) => [p, `p${i}`]));
    const tests = new Map<number, { path: string; value: unknown; negated: boolean }>();
    const out: Guards = new Map();
    const fact = (p: string, value: unknown, negated: boolean) => {
        const g = out.get(p) ?? { eq: [], ne: [] };
        (negated ? g.ne : g.eq).push(value);
        out.set(p, g);
    };
    const pathOf = (o: Operand) => (o.type === "local" ? path.get(o.value as number) : undefined);
    const isLit = (o: Operand) => o.type !== "local";
    for (const st of b.stmts) {
        const s = st.stmt;
        if (st.type === "AssignVarOnceStmt") break;
        if (st.type === "EqualStmt" || st.type === "NotEqualStmt") {
            const negated = st.type === "NotEqualStmt";
            const [x, y] = [s.a as Operand, s.b as Operand];
            for (const [p, l] of [[x, y], [y, x]] as const) {
                const at = pathOf(p);
                if (at !== undefined && isLit(l)) fact(at, literal(l), negated);
                const t = p.type === "local" ? tests.get(p.value as number) : undefined;
                // A test's result required (not) to be a boolean: true, or not false.
                if (t !== undefined && l.type === "bool") fact(t.path, t.value, t.negated === ((l.value === true) !== negated));
            }
            continue;
        }
        for (const w of writesOf(st)) {
            path.delete(w);
            tests.delete(w);
        }
        if (st.type === "AssignVarStmt" && s.source.type === "local" && path.has(s.source.value)) path.set(s.target, path.get(s.source.value)!);
        else if (st.type === "DotStmt" && s.source.type === "local" && path.has(s.source.value) && s.key.type === "string_index") path.set(s.target, `${path.get(s.source.value)}.${JSON.stringify(literal(s.key))}`);
        else if (st.type === "CallStmt" && (s.func === "equal" || s.func === "neq") && s.args.length === 2) {
            const [x, y] = s.args as Operand[];
            const at = pathOf(x) ?? pathOf(y);
            const lit = pathOf(x) !== undefined ? y : x;
            if (at !== undefined && isLit(lit)) tests.set(s.result, { path: at, value: literal(lit), negated: s.func === "neq" });
        }
    }
    return out;
}

/** Whether two definitions' guards cannot both hold: a path equal to two different literals, or equal to a literal in one and unequal to it in the other. */
function exclusive(a: Guards, b: Guards): boolean {
    for (const [p, x] of a) {
        const y = b.get(p);
        if (y === undefined) continue;
        if (x.eq.some((v) => y.eq.some((w) => w !== v) || y.ne.includes(v))) return true;
        if (y.eq.some((v) => x.ne.includes(v))) return true;
    }
    return false;
}

/** The statements a scan's level may hold before the next (data and probe statements alike): no conflict, no result, no return. */
const NEVER = new Set(["AssignVarOnceStmt", "ObjectInsertOnceStmt", "ResultSetAddStmt", "ReturnLocalStmt", "WithStmt", "CallDynamicStmt"]);

/** The join rooted at a scan, or undefined where the scan is not one. */
export function findJoin(root: Stmt, ctx: JoinContext): JoinSite | undefined {
    if (root.type !== "ScanStmt") return undefined;
    const inNest = new Set<number>(ownWrites(root));
    const writers = new Map<number, number>();
    for (const st of allStatements([root.stmt.block])) {
        for (const l of ownWrites(st)) {
            inNest.add(l);
            writers.set(l, (writers.get(l) ?? 0) + 1);
        }
    }
    // Set by hoisted probes: once each in the nest.
    const hoisted = new Set<number>();
    // The data document's parts set before the nest (and never in it).
    const freeData = (l: number) => ctx.dataOnly.has(l) && !inNest.has(l);
    if (!freeData(root.stmt.source)) return undefined;
    const tuple: number[] = [];
    const probeSet = new Set<number>();
    const probeReads = new Set<number>();
    const free = new Set<number>([root.stmt.source]);
    const scans: Stmt[] = [];
    const parts: JoinPart[][] = [];
    let level = root;
    for (;;) {
        scans.push(level);
        tuple.push(...ownWrites(level));
        const here: JoinPart[] = [];
        parts.push(here);
        const body = level.stmt.block.stmts as Stmt[];
        let next: Stmt | undefined;
        for (let i = 0; i < body.length; i++) {
            const st = body[i];
            if (st.type === "ScanStmt" && (tuple.includes(st.stmt.source) || freeData(st.stmt.source))) {
                if (i !== body.length - 1) return undefined;
                if (freeData(st.stmt.source)) free.add(st.stmt.source);
                next = st;
                break;
            }
            const classified = classify(st, ctx, { tuple, probeSet, freeData, inNest });
            const kind = classified?.kind;
            const { reads, writes } = classified ?? { reads: new Set<number>(), writes: [] };
            // A data statement setting a local a probe before it read: the probe would see the later value.
            if (kind === "data" && writes.some((l) => probeReads.has(l))) return undefined;
            if (kind === "data") {
                for (const l of reads) if (freeData(l)) free.add(l);
                for (const l of writes) if (!tuple.includes(l)) tuple.push(l);
                here.push({ st, data: true });
                continue;
            }
            // The equality: a local set before the nest (not part of the data document) with a local the data statements set.
            if (st.type === "EqualStmt") {
                const [a, b] = [st.stmt.a as Operand, st.stmt.b as Operand];
                for (const [key, probe] of [[a, b], [b, a]] as const) {
                    if (key.type !== "local" || probe.type !== "local") continue;
                    const k = key.value as number;
                    const p = probe.value as number;
                    if ((inNest.has(k) && !hoisted.has(k)) || ctx.dataOnly.has(k) || !tuple.includes(p) || probeSet.has(p)) continue;
                    const rest = body.slice(i + 1);
                    if (breaksOut(rest, 0)) return undefined;
                    // What the nest computed for the elements it skips must not be read after it.
                    if ([...tuple, ...probeSet].some((l) => ctx.liveAfter(l))) return undefined;
                    return { scans, parts, key, probe: p, rest, tuple, free: [...free].filter((l) => l !== 1 && l !== 0) };
                }
            }
            if (kind === "probe") {
                // The planner computes the review's parts again in the loop: such a probe computes the same each time.
                const hoist = [...reads].every((l) => !inNest.has(l) || hoisted.has(l)) && writes.every((l) => writers.get(l) === 1);
                for (const l of writes) {
                    probeSet.add(l);
                    if (hoist) hoisted.add(l);
                }
                for (const l of reads) probeReads.add(l);
                here.push({ st, data: false, ...(hoist ? { hoist } : {}) });
                continue;
            }
            return undefined;
        }
        if (next === undefined) return undefined;
        level = next;
    }
}

/** The locals a statement (with its nested blocks) reads before setting them, but input and data handed to a function the plan defines (every call passes them first). */
function readsOf(st: Stmt, ctx: JoinContext): Set<number> {
    const out = new Set<number>();
    const walk = (stmts: readonly Stmt[], written: Set<number>) => {
        for (const s of stmts) {
            const reads = s.type === "CallStmt" && ctx.func(s.stmt.func) !== undefined ? new Set((s.stmt.args as Operand[]).slice(2).flatMap((o) => (o.type === "local" ? [o.value as number] : []))) : ownReads(s);
            for (const r of reads) if (!written.has(r)) out.add(r);
            for (const b of nestedBlocks(s)) walk(b.stmts, s.type === "ScanStmt" ? new Set([...written, s.stmt.key, s.stmt.value]) : new Set(written));
            if (s.type !== "ScanStmt") for (const w of ownWrites(s)) written.add(w);
        }
    };
    walk([st], new Set());
    return out;
}

function writesOf(st: Stmt): number[] {
    return [...new Set([...allStatements([{ stmts: [st] }])].flatMap((s) => ownWrites(s)))];
}

/** Whether a statement of a level is a data statement, a probe statement, or neither; with the locals it reads and sets. */
function classify(
    st: Stmt,
    ctx: JoinContext,
    seen: { tuple: readonly number[]; probeSet: ReadonlySet<number>; freeData: (l: number) => boolean; inNest: ReadonlySet<number> },
): { kind: "data" | "probe"; reads: Set<number>; writes: number[] } | undefined {
    const all = [...allStatements([{ stmts: [st] }])];
    if (all.some((s) => NEVER.has(s.type))) return undefined;
    if (breaksOut([st], 0)) return undefined;
    const madeHere = new Set(all.filter((s) => MAKES.has(s.type)).map((s) => s.stmt.target as number));
    let readsInput = false;
    for (const s of all) {
        const target = s.type === "ArrayAppendStmt" ? s.stmt.array : s.type === "ObjectInsertStmt" ? s.stmt.object : s.type === "SetAddStmt" ? s.stmt.set : undefined;
        if (target !== undefined && !madeHere.has(target)) return undefined;
        if (s.type === "CallStmt") {
            const f = ctx.func(s.stmt.func);
            if (f !== undefined) {
                if (!f.raiseFree) return undefined;
                if (f.readsInput) readsInput = true;
            }
        }
    }
    const reads = readsOf(st, ctx);
    const writes = writesOf(st);
    // A local the nest sets in one role and then another would be read at the wrong time.
    if (writes.some((l) => seen.probeSet.has(l))) return undefined;
    if (!readsInput && [...reads].every((l) => seen.tuple.includes(l) || seen.freeData(l)) && !writes.some((l) => l === 0 || l === 1)) return { kind: "data", reads, writes };
    if (writes.some((l) => seen.tuple.includes(l))) return undefined;
    // A probe reads what is set before the nest, what the data statements set before it, and the probes before it.
    if ([...reads].every((l) => !seen.inNest.has(l) || seen.tuple.includes(l) || seen.probeSet.has(l))) return { kind: "probe", reads, writes };
    return undefined;
}

