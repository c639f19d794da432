/**
 * Rule bodies that start alike, run once up to where they differ. The planner writes each body
 * of a rule (each top-level block of its function, each block of a BlockStmt) on its own, and a
 * template's bodies often start with the same statements (`container := input.review.object.spec
 * .containers[_]; not is_exempt(container); ...`): the library's container templates repeat the
 * same walk and the same is_exempt call in up to thirteen bodies for every container.
 *
 * fuseBlocks rewrites a run of such blocks as the statements they share, once, followed by their
 * differing rests, each a block of its own (where one fails the next runs, as before):
 *   - the shared statements only set locals, fail, or call functions and built-ins (which give the
 *     same value for the same arguments within an evaluation); where one stops evaluation with a
 *     conflict, it does so in the first body as written, before anything else;
 *   - no rest sets a local they read or set, changes a collection they made, or leaves its block
 *     but by failing.
 * Where every rest is a scan over the same collection, the scans become one scan whose body runs
 * each rest's body in turn (those bodies then fused the same way). The order in which the bodies'
 * turns come changes, which cannot be seen where no body changes a collection it did not make but
 * by adding to a set no body reads, nor reads a local another body sets or one read after the
 * scans. Only which conflict stops evaluation first could change: the compiled code then
 * evaluates again with the functions as written (../compile.ts), so that the conflict reported is
 * the one evaluation as written meets first.
 */
import { allStatements, bodyLiveOnEntry, breaksOut, changedCollections, liveOnEntry, LOCALS_ONLY, MAKES, ownReads, ownWrites, type Block, type Plan, type Stmt } from "./ir";

export interface FuseContext {
    /** Whether a call (by the plan's name) gives the same value for the same arguments within an evaluation (a function of the plan, a built-in of the runtime). */
    pureCall(name: string): boolean;
}

/**
 * The plan with runs of blocks that start alike fused in its functions (a new plan; the one given
 * is not changed), and the indexes of the functions where scans were fused (where the order of
 * the bodies' turns changed).
 */
export function fuseBlocks(plan: Plan, ctx: FuseContext): { plan: Plan; reordered: Set<number> } {
    const funcs = plan.funcs?.funcs;
    if (!funcs) return { plan, reordered: new Set() };
    const reordered = new Set<number>();
    const fused = funcs.map((f, i) => {
        const scans = { fused: 0 };
        const blocks = fuseFrames(f.blocks, new Set([f.return]), { ...ctx, scans });
        if (scans.fused > 0) reordered.add(i);
        return { ...f, blocks };
    });
    return { plan: { ...plan, funcs: { funcs: fused } }, reordered };
}

interface Context extends FuseContext {
    /** How many scans were fused. */
    scans: { fused: number };
}

const setOf = (xs: Iterable<number>) => new Set(xs);
const union = (...sets: ReadonlySet<number>[]) => {
    const out = new Set<number>();
    for (const s of sets) for (const x of s) out.add(x);
    return out;
};
const meets = (a: ReadonlySet<number>, b: ReadonlySet<number>) => [...a].some((x) => b.has(x));
/** The locals a list sets, assigned once included (a conflict's check reads what an earlier body set). */
const writesIn = (stmts: readonly Stmt[]) => setOf([...allStatements([{ stmts: [...stmts] }])].flatMap((st) => (st.type === "AssignVarOnceStmt" ? [st.stmt.target as number] : ownWrites(st))));
const readsIn = (stmts: readonly Stmt[]) => setOf([...allStatements([{ stmts: [...stmts] }])].flatMap((st) => [...ownReads(st)]));

/** A statement as text without where it comes from (bodies from different lines of Rego are alike). */
const shape = (st: Stmt): string => JSON.stringify(st, (k, v) => (k === "file" || k === "row" || k === "col" ? undefined : v));

/**
 * A list of frames (a function's blocks, a BlockStmt's): each runs after the one before, whether
 * that failed or not. `after`: the locals read once the frames are done.
 */
function fuseFrames(frames: readonly Block[], after: ReadonlySet<number>, ctx: Context): Block[] {
    const out: Block[] = [];
    const liveFrom = (j: number) => union(after, ...frames.slice(j).map((b) => liveOnEntry(b.stmts)));
    for (let i = 0; i < frames.length; ) {
        let end = i + 1;
        let shared = Infinity;
        while (end < frames.length) {
            const n = Math.min(shared, sharedPrefix(frames[i].stmts, frames[end].stmts, ctx));
            if (n === 0) break;
            shared = n;
            end++;
        }
        let fused: Block | undefined;
        for (let k = end - i >= 2 ? shared : 0; k >= 1 && fused === undefined; k--) fused = fuseRun(frames.slice(i, end), k, liveFrom(end), ctx);
        if (fused === undefined) {
            out.push({ stmts: fuseStmts(frames[i].stmts, liveFrom(i + 1), ctx) });
            i++;
        } else {
            out.push({ stmts: fuseStmts(fused.stmts, liveFrom(end), ctx) });
            i = end;
        }
    }
    return out;
}

/** The statements of a list with the frames nested in them fused (`after`: the locals read after the list). */
function fuseStmts(stmts: readonly Stmt[], after: ReadonlySet<number>, ctx: Context): Stmt[] {
    const out = stmts.map((st, i) => {
        const rest = () => union(after, liveOnEntry(stmts, i + 1));
        if (st.type === "BlockStmt") return { type: st.type, stmt: { ...st.stmt, blocks: fuseFrames(st.stmt.blocks, rest(), ctx) } };
        if (st.type === "ScanStmt") {
            const body = st.stmt.block.stmts as Stmt[];
            const next = bodyLiveOnEntry(st);
            return { type: st.type, stmt: { ...st.stmt, block: { stmts: fuseStmts(body, union(rest(), next), ctx) } } };
        }
        if (st.type === "NotStmt" || st.type === "WithStmt") return { type: st.type, stmt: { ...st.stmt, block: { stmts: fuseStmts(st.stmt.block.stmts, rest(), ctx) } } };
        return st;
    });
    // A block of one frame ending the list, left only by failing, is the list's own end (a fused
    // scan's body: its first statements in view, as a pinned scan's check must be).
    const last = out[out.length - 1];
    if (last?.type === "BlockStmt" && last.stmt.blocks.length === 1 && !breaksOut(last.stmt.blocks[0].stmts, 0)) return [...out.slice(0, -1), ...last.stmt.blocks[0].stmts];
    return out;
}

/** How many statements two lists start with alike that may run once for both. */
function sharedPrefix(a: readonly Stmt[], b: readonly Stmt[], ctx: Context): number {
    let n = 0;
    while (n < a.length && n < b.length && runsOnce(a[n], ctx) && shape(a[n]) === shape(b[n])) n++;
    return n;
}

/** Whether a statement gives the same outcome each time it runs on the same locals, and does nothing but set locals and fail. */
function runsOnce(st: Stmt, ctx: Context): boolean {
    if (LOCALS_ONLY.has(st.type)) return true;
    if (st.type === "CallStmt") return ctx.pureCall(st.stmt.func);
    if (st.type === "NotStmt") return !breaksOut(st.stmt.block.stmts, 0) && (st.stmt.block.stmts as Stmt[]).every((x) => runsOnce(x, ctx));
    return false;
}

/**
 * A run of frames sharing their first k statements as one frame: those statements, then the rests
 * (one scan where each rest is a scan over the same collection). Undefined where a rest could see
 * the difference.
 */
function fuseRun(run: readonly Block[], k: number, after: ReadonlySet<number>, ctx: Context): Block | undefined {
    const prefix = run[0].stmts.slice(0, k);
    const rests = run.map((b) => b.stmts.slice(k));
    const prefixWrites = writesIn(prefix);
    const prefixReads = readsIn(prefix);
    for (const rest of rests) {
        const w = writesIn(rest);
        if (breaksOut(rest, 0) || meets(w, prefixWrites) || meets(w, prefixReads) || meets(changedCollections([{ stmts: rest }]), prefixWrites)) return undefined;
    }
    const scan = fusedScan(rests, after, ctx);
    return { stmts: [...prefix, scan ?? { type: "BlockStmt", stmt: { blocks: rests.map((stmts) => ({ stmts })) } }] };
}

/** Scans over the same collection (each rest one scan) as one scan running each body in turn; undefined where the order of turns could be seen. */
function fusedScan(rests: readonly Stmt[][], after: ReadonlySet<number>, ctx: Context): Stmt | undefined {
    const scans = rests.map((r) => (r.length === 1 && r[0].type === "ScanStmt" ? r[0] : undefined));
    const first = scans[0];
    if (first === undefined || scans.some((s) => s === undefined || s.stmt.source !== first.stmt.source || s.stmt.key !== first.stmt.key || s.stmt.value !== first.stmt.value)) return undefined;
    const bodies = scans.map((s) => s!.stmt.block.stmts as Stmt[]);
    const writes = union(...bodies.map(writesIn));
    if (writes.has(first.stmt.source) || meets(writes, after)) return undefined;
    const added = new Set<number>();
    for (const scan of scans) {
        const body = scan!.stmt.block.stmts as Stmt[];
        if (breaksOut(body, 0)) return undefined;
        const all = [...allStatements([{ stmts: body }])];
        const made = setOf(all.filter((st) => MAKES.has(st.type)).map((st) => st.stmt.target as number));
        for (const st of all) {
            if (["WithStmt", "CallDynamicStmt", "ReturnLocalStmt"].includes(st.type)) return undefined;
            if (st.type === "CallStmt" && !ctx.pureCall(st.stmt.func)) return undefined;
            if (st.type === "ArrayAppendStmt" && !made.has(st.stmt.array)) return undefined;
            if ((st.type === "ObjectInsertStmt" || st.type === "ObjectInsertOnceStmt") && !made.has(st.stmt.object)) return undefined;
            if (st.type === "SetAddStmt" && !made.has(st.stmt.set)) added.add(st.stmt.set);
        }
        if (meets(bodyLiveOnEntry(scan!), writes)) return undefined;
    }
    // A set the bodies add to is read by none of them (its members come in another order).
    for (const body of bodies) for (const st of allStatements([{ stmts: body }])) if (st.type !== "SetAddStmt" && [...ownReads(st)].some((l) => added.has(l))) return undefined;
    ctx.scans.fused++;
    return { type: "ScanStmt", stmt: { ...first.stmt, block: { stmts: [{ type: "BlockStmt", stmt: { blocks: bodies.map((stmts) => ({ stmts })) } }] } } };
}
