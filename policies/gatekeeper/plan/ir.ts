/**
 * OPA's plan IR (`opa build -t plan`, v1/ir of OPA 1.17.1) as the plan compiler reads it, and what
 * its analyses ask of a statement: the locals it reads and sets, its nested blocks, the locals live
 * on entry to a statement list.
 */
export interface Plan {
    static: { strings?: { value: string }[]; builtin_funcs?: { name: string }[]; files?: { value: string }[] };
    plans: { plans: { name: string; blocks: Block[] }[] };
    funcs?: { funcs: Func[] | null };
}
export interface Func {
    name: string;
    params: number[];
    return: number;
    blocks: Block[];
}
export interface Block {
    stmts: { type: string; stmt: Record<string, any> }[];
}
export interface Operand {
    type: "local" | "bool" | "string_index";
    value: number | boolean;
}

export type Stmt = Block["stmts"][number];

/** Statement fields that name a local the statement reads (operands, which say so, aside). */
const READ_FIELDS: Record<string, string[]> = {
    IsDefinedStmt: ["source"],
    IsUndefinedStmt: ["source"],
    ScanStmt: ["source"],
    ReturnLocalStmt: ["source"],
    ResultSetAddStmt: ["value"],
    ObjectMergeStmt: ["a", "b"],
    ArrayAppendStmt: ["array"],
    ObjectInsertStmt: ["object"],
    ObjectInsertOnceStmt: ["object"],
    SetAddStmt: ["set"],
    AssignVarOnceStmt: ["target"],
    WithStmt: ["local"],
    CallDynamicStmt: ["args"],
};
/** Statement fields that name a local the statement sets. */
const WRITE_FIELDS: Record<string, string[]> = {
    AssignVarStmt: ["target"],
    AssignIntStmt: ["target"],
    DotStmt: ["target"],
    CallStmt: ["result"],
    CallDynamicStmt: ["result"],
    LenStmt: ["target"],
    MakeArrayStmt: ["target"],
    MakeNullStmt: ["target"],
    MakeNumberIntStmt: ["target"],
    MakeNumberRefStmt: ["target"],
    MakeObjectStmt: ["target"],
    MakeSetStmt: ["target"],
    ObjectMergeStmt: ["target"],
    ResetLocalStmt: ["target"],
    ScanStmt: ["key", "value"],
};
export const MAKES = new Set(["MakeArrayStmt", "MakeObjectStmt", "MakeSetStmt"]);

/** Statements that only set locals or fail: no call, no collection changed, no break. */
export const LOCALS_ONLY = new Set([
    "AssignIntStmt", "AssignVarStmt", "DotStmt", "EqualStmt", "IsArrayStmt", "IsDefinedStmt", "IsObjectStmt", "IsSetStmt", "IsUndefinedStmt",
    "LenStmt", "MakeNullStmt", "MakeNumberIntStmt", "MakeNumberRefStmt", "NotEqualStmt", "ResetLocalStmt",
]);

/** The collections (held by locals) that the statements of the blocks add to or insert into. */
export function changedCollections(blocks: readonly Block[]): Set<number> {
    const out = new Set<number>();
    for (const st of allStatements(blocks)) {
        if (st.type === "ArrayAppendStmt") out.add(st.stmt.array);
        else if (st.type === "ObjectInsertStmt" || st.type === "ObjectInsertOnceStmt") out.add(st.stmt.object);
        else if (st.type === "SetAddStmt") out.add(st.stmt.set);
    }
    return out;
}

/** The locals a scan's body reads before setting them (its key and value set by the scan): what a turn reads of the turn before. */
export const bodyLiveOnEntry = (scan: Stmt): ReadonlySet<number> => liveOnEntry(scan.stmt.block.stmts, 0, new Set([scan.stmt.key, scan.stmt.value]));

/** The locals a statement reads itself (not in its nested blocks); made once per statement. */
export function ownReads(st: Stmt): Set<number> {
    let out = readsOf.get(st.stmt);
    if (out !== undefined) return out;
    out = new Set<number>();
    readsOf.set(st.stmt, out);
    for (const field of READ_FIELDS[st.type] ?? []) for (const l of [st.stmt[field]].flat()) if (typeof l === "number") out.add(l);
    const operands = (x: unknown): void => {
        if (Array.isArray(x)) x.forEach(operands);
        else if (x && typeof x === "object") {
            const o = x as Record<string, unknown>;
            if (o.type === "local" && typeof o.value === "number") out.add(o.value);
            else if (!("stmts" in o)) Object.values(o).forEach(operands);
        }
    };
    for (const [k, v] of Object.entries(st.stmt)) if (k !== "block" && k !== "blocks") operands(v);
    return out;
}
const readsOf = new WeakMap<object, Set<number>>();

export const ownWrites = (st: Stmt): number[] => (WRITE_FIELDS[st.type] ?? []).map((f) => st.stmt[f]).filter((l): l is number => typeof l === "number");

export const nestedBlocks = (st: Stmt): Block[] => (st.type === "BlockStmt" ? st.stmt.blocks : st.type === "NotStmt" || st.type === "WithStmt" || st.type === "ScanStmt" ? [st.stmt.block] : []);

/**
 * The locals a statement list (from index `from`) may read before writing them: live on entry.
 * Nested blocks may be skipped, so their writes count only inside them; a scan sets its key and
 * value before its body runs. Computed once per list and start (the scans of one block share
 * the lists after them).
 */
export function liveOnEntry(stmts: readonly Stmt[], from = 0, written: ReadonlySet<number> = NONE_WRITTEN): ReadonlySet<number> {
    const cacheable = written === NONE_WRITTEN;
    if (cacheable) {
        const hit = liveCache.get(stmts)?.get(from);
        if (hit !== undefined) return hit;
    }
    const out = new Set<number>();
    const w = new Set(written);
    for (let i = from; i < stmts.length; i++) {
        const st = stmts[i];
        for (const r of ownReads(st)) if (!w.has(r)) out.add(r);
        for (const b of nestedBlocks(st)) {
            const inner = st.type === "ScanStmt" ? new Set([...w, st.stmt.key, st.stmt.value]) : w;
            for (const r of liveOnEntry(b.stmts, 0, inner)) out.add(r);
        }
        if (st.type !== "ScanStmt") for (const l of ownWrites(st)) w.add(l);
    }
    if (cacheable) {
        let byStart = liveCache.get(stmts);
        if (byStart === undefined) liveCache.set(stmts, (byStart = new Map()));
        byStart.set(from, out);
    }
    return out;
}
const NONE_WRITTEN: ReadonlySet<number> = new Set();
const liveCache = new WeakMap<readonly Stmt[], Map<number, ReadonlySet<number>>>();

/** Every statement of a block list, nested ones included. */
export function* allStatements(blocks: readonly Block[]): Generator<Stmt> {
    for (const b of blocks) {
        for (const st of b.stmts) {
            yield st;
            yield* allStatements(nestedBlocks(st));
        }
    }
}


/**
 * Whether a break among the statements leaves past the innermost loop or block they are in
 * (`depth`: how many frames the statements are inside it; a scan counts two, its loop and the block
 * around it).
 */
export function breaksOut(stmts: readonly Stmt[], depth: number): boolean {
    return stmts.some((st) => (st.type === "BreakStmt" && st.stmt.index > depth) || nestedBlocks(st).some((b) => breaksOut(b.stmts, depth + (st.type === "ScanStmt" ? 2 : 1))));
}

/**
 * Visits every scan (ScanStmt) of a function's blocks with a test of whether a local may be read
 * after the scan before being set again (or by an enclosing scan's body on its next turn).
 */
export function visitScans(blocks: readonly Block[], visit: (scan: Stmt, liveAfter: (local: number) => boolean) => void): void {
    // Each function block as a statement of one list: after a block ends (or fails), the next runs.
    const top: Stmt[] = blocks.map((b) => ({ type: "BlockStmt", stmt: { blocks: [b] } }));
    const walk = (stmts: readonly Stmt[], after: { stmts: readonly Stmt[]; from: number }[], loops: Stmt[]): void => {
        stmts.forEach((st, i) => {
            const rest = [{ stmts, from: i + 1 }, ...after];
            if (st.type === "ScanStmt") {
                const liveSets = [...rest.map(({ stmts: s, from }) => liveOnEntry(s, from)), ...loops.map((l) => liveOnEntry(l.stmt.block.stmts))];
                visit(st, (local) => liveSets.some((set) => set.has(local)));
                walk(st.stmt.block.stmts, rest, [...loops, st]);
            } else for (const b of nestedBlocks(st)) walk(b.stmts, rest, loops);
        });
    };
    walk(top, [], []);
}
