/**
 * Rules specialised by their callers' constant keys, as topdown evaluates them. A scan over a
 * partial set rule whose body goes on only for elements whose field is a constant, as the
 * library's `general_violation[{"msg": msg, "field": "containers"}]` reads `general_violation`,
 * makes topdown unify the rule's head with that key before each body runs (evalVirtualPartial's
 * evalOneRulePreUnify in v1/topdown/eval.go): `field` is "containers" from the start, and
 * `input.review.object.spec[field][_]` looks up one field of the spec. The plan computes the whole
 * set instead (every field of the spec, with every conflict its other elements raise) and the
 * caller filters it.
 *
 * specializeRules gives such a call a copy of the rule that adds only the elements of those
 * constants: an element whose field is another constant is not added; one whose field is a local
 * is checked right after that local is set, where that is in a scan's body and nothing the rest of
 * the body does is seen outside it but the element (else right before it is added). Together with
 * pinned scans (pinnedScanKey: a scan whose body first requires its key to be a constant looks
 * that key up), the copy evaluates what topdown evaluates.
 */
import { allStatements, bodyLiveOnEntry, breaksOut, LOCALS_ONLY, MAKES, nestedBlocks, ownWrites, visitScans, type Block, type Func, type Operand, type Plan, type Stmt } from "./ir";

/** A caller's condition on a rule's elements: an object whose field `field` is the literal `value`. */
interface FieldFilter {
    field: string;
    value: Operand;
}

const isLocal = (o: Operand | undefined): o is Operand => o?.type === "local";
const isLiteral = (o: Operand | undefined): o is Operand => o?.type === "string_index" || o?.type === "bool";

/** The plan with each filtered call of a partial set rule calling the rule specialised to its filters (the same plan when there is none). */
export function specializeRules(plan: Plan): Plan {
    const funcs = plan.funcs?.funcs ?? [];
    if (funcs.length === 0) return plan;
    const strings = (plan.static.strings ?? []).map((s) => s.value);
    const byName = new Map(funcs.map((f) => [f.name, f]));
    const literalKey = (o: Operand) => (o.type === "bool" ? `b:${o.value}` : `s:${strings[o.value as number]}`);
    const made = new Map<string, Func | null>();
    const added: Func[] = [];
    const calls = new Map<object, string>();

    const visit = (blocks: readonly Block[]) => {
        const live = new Map<object, (local: number) => boolean>();
        visitScans(blocks, (scan, liveAfter) => live.set(scan.stmt, liveAfter));
        const walk = (stmts: readonly Stmt[]) => {
            stmts.forEach((st, i) => {
                for (const b of nestedBlocks(st)) walk(b.stmts);
                if (st.type !== "ScanStmt") return;
                const call = ruleCall(stmts, i, byName);
                if (call === undefined) return;
                const filters = filtersOf(st, live.get(st.stmt)!, strings);
                if (filters === undefined) return;
                const key = `${call.stmt.func}\u0000${filters.map((f) => `${f.field}=${literalKey(f.value)}`).join("\u0000")}`;
                if (!made.has(key)) {
                    const f = specialized(byName.get(call.stmt.func)!, filters, strings, `${call.stmt.func}#${added.length}`);
                    made.set(key, f ?? null);
                    if (f) added.push(f);
                }
                const f = made.get(key);
                if (f) calls.set(call.stmt, f.name);
            });
        };
        for (const b of blocks) walk(b.stmts);
    };
    for (const f of funcs) visit(f.blocks);
    for (const p of plan.plans.plans) visit(p.blocks);
    if (calls.size === 0) return plan;

    // The callers' statements redirected (copies: the plan given is not changed).
    const redirect = (blocks: Block[]): Block[] =>
        blocks.map((b) => ({
            stmts: b.stmts.map((st) => {
                const to = calls.get(st.stmt);
                if (to !== undefined) return { type: st.type, stmt: { ...st.stmt, func: to } };
                if (nestedBlocks(st).length === 0) return st;
                const stmt = { ...st.stmt };
                if (st.type === "BlockStmt") stmt.blocks = redirect(st.stmt.blocks);
                else stmt.block = redirect([st.stmt.block])[0];
                return { type: st.type, stmt };
            }),
        }));
    return {
        ...plan,
        plans: { plans: plan.plans.plans.map((p) => ({ ...p, blocks: redirect(p.blocks) })) },
        funcs: { funcs: [...funcs, ...added].map((f) => ({ ...f, blocks: redirect(f.blocks) })) },
    };
}

/** The call of a partial rule (input and data its only arguments) whose result the scan at stmts[i] scans, set in the same list. */
function ruleCall(stmts: readonly Stmt[], i: number, byName: ReadonlyMap<string, Func>): Stmt | undefined {
    const source = stmts[i].stmt.source as number;
    for (let j = i - 1; j >= 0; j--) {
        const st = stmts[j];
        if (st.type === "CallStmt" && st.stmt.result === source) {
            const f = byName.get(st.stmt.func);
            const args = st.stmt.args as Operand[];
            const ok = f !== undefined && f.params.length === 2 && args.length === 2 && args.every((a, n) => a.type === "local" && a.value === n);
            return ok ? st : undefined;
        }
        if (ownWrites(st).includes(source) || [...allStatements(nestedBlocks(st))].some((x) => ownWrites(x).includes(source))) return undefined;
    }
    return undefined;
}

/**
 * The filters a scan's body puts on each element before it does anything but set locals: a field
 * of the element (its key: a set's member) equal to a literal. Undefined when there is none, or
 * when a local the body sets before them (or the scan's key or value) may be read after the scan.
 */
function filtersOf(scan: Stmt, liveAfter: (local: number) => boolean, strings: readonly string[]): FieldFilter[] | undefined {
    const element = scan.stmt.key as number;
    const fieldOf = new Map<number, string>();
    const written: number[] = [scan.stmt.key, scan.stmt.value];
    const filters: FieldFilter[] = [];
    for (const st of scan.stmt.block.stmts as Stmt[]) {
        if (!LOCALS_ONLY.has(st.type)) break;
        const s = st.stmt;
        if (st.type === "EqualStmt") {
            const [local, literal] = isLocal(s.a) && isLiteral(s.b) ? [s.a, s.b] : isLocal(s.b) && isLiteral(s.a) ? [s.b, s.a] : [undefined, undefined];
            const field = local === undefined ? undefined : fieldOf.get(local.value as number);
            if (field !== undefined && !filters.some((f) => f.field === field)) filters.push({ field, value: literal! });
            continue;
        }
        const target = ownWrites(st)[0];
        if (target === undefined) continue;
        written.push(target);
        fieldOf.delete(target);
        if (st.type === "DotStmt" && isLocal(s.source) && s.source.value === element && s.key?.type === "string_index") fieldOf.set(target, strings[s.key.value]);
        else if (st.type === "AssignVarStmt" && isLocal(s.source) && fieldOf.has(s.source.value as number)) fieldOf.set(target, fieldOf.get(s.source.value as number)!);
    }
    if (filters.length === 0 || written.some(liveAfter)) return undefined;
    return filters.sort((a, b) => (a.field < b.field ? -1 : a.field > b.field ? 1 : 0));
}

/** Where a statement sits: its list, and its index there; for a scan's body, the scan. */
interface Place {
    stmts: Stmt[];
    index: number;
    scan?: Stmt;
}

/**
 * A copy of a partial set rule (its first block makes the set it returns, every other adds to it)
 * that adds only the elements passing the filters; undefined where an element's shape cannot be
 * told (a value added that is not an object built in place with literal keys).
 */
function specialized(rule: Func, filters: readonly FieldFilter[], strings: readonly string[], name: string): Func | undefined {
    const f = structuredClone(rule) as Func;
    f.name = name;
    const ret = f.return;
    const first = f.blocks[0]?.stmts;
    if (first?.length !== 1 || first[0].type !== "MakeSetStmt" || first[0].stmt.target !== ret) return undefined;
    const sameLiteral = (a: Operand, b: Operand) => a.type === b.type && (a.type === "bool" ? a.value === b.value : strings[a.value as number] === strings[b.value as number]);
    const edits: { stmts: Stmt[]; at: number; st: Stmt; replace?: boolean }[] = [];
    const live = new Map<object, (local: number) => boolean>();
    visitScans(f.blocks, (scan, liveAfter) => live.set(scan.stmt, liveAfter));

    let ok = true;
    const walk = (stmts: Stmt[], path: Place[], scan?: Stmt) => {
        stmts.forEach((st, index) => {
            if (!ok) return;
            const here = [...path, { stmts, index, scan }];
            if (st.type === "SetAddStmt" && st.stmt.set === ret) {
                const inserts = insertsOf(stmts, index, strings);
                if (inserts === undefined) return void (ok = false);
                for (const filter of filters) {
                    const v = inserts.get(filter.field);
                    if (v === undefined || (isLiteral(v) && !sameLiteral(v, filter.value))) {
                        // Never passes: not added.
                        edits.push({ stmts, at: index, st: { type: "NopStmt", stmt: {} }, replace: true });
                        return;
                    }
                }
                for (const filter of filters) {
                    const v = inserts.get(filter.field)!;
                    if (!isLocal(v)) continue;
                    const check: Stmt = { type: "EqualStmt", stmt: { a: v, b: filter.value } };
                    const at = prunePoint(here, v.value as number, ret, live);
                    if (at !== undefined) edits.push({ ...at, st: check });
                    else if (index === stmts.length - 1) edits.push({ stmts, at: index, st: check });
                    else return void (ok = false);
                }
                return;
            }
            if (st.type === "ScanStmt") walk(st.stmt.block.stmts, here, st);
            else for (const b of nestedBlocks(st)) walk(b.stmts, here);
        });
    };
    for (const b of f.blocks.slice(1)) walk(b.stmts, []);
    if (!ok) return undefined;
    // Applied last to first within each list (indexes stay right), into new lists (analyses keep theirs by list).
    const byList = new Map<Stmt[], typeof edits>();
    for (const e of edits) byList.set(e.stmts, [...(byList.get(e.stmts) ?? []), e]);
    const replaced = new Map<Stmt[], Stmt[]>();
    for (const [stmts, es] of byList) {
        const out = [...stmts];
        for (const e of es.sort((a, b) => b.at - a.at)) out.splice(e.at, e.replace ? 1 : 0, e.st);
        replaced.set(stmts, out);
    }
    const swap = (b: Block) => {
        b.stmts = replaced.get(b.stmts) ?? b.stmts;
        for (const st of b.stmts) for (const inner of nestedBlocks(st)) swap(inner);
    };
    f.blocks.forEach(swap);
    return f;
}

/** The literal-keyed fields of the object the SetAddStmt at stmts[i] adds, made in the same list before it; undefined when that cannot be told. */
function insertsOf(stmts: readonly Stmt[], i: number, strings: readonly string[]): Map<string, Operand> | undefined {
    const value = stmts[i].stmt.value as Operand;
    if (!isLocal(value)) return undefined;
    // The locals that hold the object (the planner copies it: `x := {...}`), back to where it is made.
    const holders = new Set<number>([value.value as number]);
    let made = -1;
    for (let j = i - 1; j >= 0 && made < 0; j--) {
        const st = stmts[j];
        const [target] = ownWrites(st);
        if (target === undefined || !holders.has(target)) continue;
        if (st.type === "MakeObjectStmt") made = j;
        else if (st.type === "AssignVarStmt" && isLocal(st.stmt.source)) holders.add(st.stmt.source.value as number);
        else return undefined;
    }
    if (made < 0) return undefined;
    const fields = new Map<string, Operand>();
    for (let j = made + 1; j < i; j++) {
        const st = stmts[j];
        if ((st.type === "ObjectInsertStmt" || st.type === "ObjectInsertOnceStmt") && holders.has(st.stmt.object)) {
            if (st.stmt.key?.type !== "string_index") return undefined;
            const k = strings[st.stmt.key.value];
            // A second insert of a key: the last one's value (ObjectInsertStmt), or a conflict (Once): not told.
            if (fields.has(k)) return undefined;
            fields.set(k, st.stmt.value);
        } else if (ownWrites(st).some((l) => holders.has(l)) && !(st.type === "AssignVarStmt" && isLocal(st.stmt.source) && holders.has(st.stmt.source.value as number))) return undefined;
        else if ([...allStatements(nestedBlocks(st))].some((x) => holders.has(x.stmt.object) || ownWrites(x).some((l) => holders.has(l)))) return undefined;
    }
    return fields;
}

/**
 * Where a check of `local` can go right after the local is set, so that an element that fails it
 * skips the rest of the work: the statement setting it (or the scan binding it) found on the path
 * to the add, in a scan's body whose rest adds nothing else to the rule's set, changes nothing it
 * did not make, leaves the loop only by failing, and sets no local read after the scan or on its
 * next turn. Undefined where there is no such place.
 */
function prunePoint(path: readonly Place[], local: number, ret: number, live: ReadonlyMap<object, (local: number) => boolean>): { stmts: Stmt[]; at: number } | undefined {
    for (let k = path.length - 1; k >= 0; k--) {
        const { stmts, index, scan } = path[k];
        for (let j = index - 1; j >= 0; j--) {
            const st = stmts[j];
            if (ownWrites(st).includes(local) && nestedBlocks(st).length === 0) return scan && quietRest(scan, stmts, j + 1, ret, live) ? { stmts, at: j + 1 } : undefined;
            if (ownWrites(st).includes(local) || [...allStatements(nestedBlocks(st))].some((x) => ownWrites(x).includes(local))) return undefined;
        }
        if (scan && (scan.stmt.key === local || scan.stmt.value === local)) return quietRest(scan, stmts, 0, ret, live) ? { stmts, at: 0 } : undefined;
    }
    return undefined;
}

/** Whether the rest of a scan's body (from `from`) has no effect seen outside it but one addition to the rule's set (`ret`). */
function quietRest(scan: Stmt, body: readonly Stmt[], from: number, ret: number, live: ReadonlyMap<object, (local: number) => boolean>): boolean {
    const rest = body.slice(from);
    const all = [...allStatements([{ stmts: rest }])];
    const made = new Set(all.filter((st) => MAKES.has(st.type)).map((st) => st.stmt.target as number));
    if (breaksOut(rest, 0)) return false;
    let adds = 0;
    for (const st of all) {
        if (st.type === "ReturnLocalStmt" || st.type === "WithStmt" || st.type === "CallDynamicStmt") return false;
        if (st.type === "SetAddStmt" && st.stmt.set === ret) adds++;
        else if (st.type === "SetAddStmt" && !made.has(st.stmt.set)) return false;
        if (st.type === "ArrayAppendStmt" && !made.has(st.stmt.array)) return false;
        if ((st.type === "ObjectInsertStmt" || st.type === "ObjectInsertOnceStmt") && !made.has(st.stmt.object)) return false;
    }
    const liveAfter = live.get(scan.stmt)!;
    const nextTurn = bodyLiveOnEntry(scan);
    return adds === 1 && !all.some((st) => ownWrites(st).some((l) => liveAfter(l) || nextTurn.has(l)));
}

/**
 * The literal a scan's key is pinned to: its body, before it does anything but set locals and
 * fail, requires the key (or a copy of it) to equal a literal, so that at most the element of
 * that key passes. Undefined when it does not, or when a local the scan or those statements set
 * may be read after the scan or on its next turn (then every element's turn counts).
 */
export function pinnedScanKey(scan: Stmt, liveAfter: (local: number) => boolean): Operand | undefined {
    const copies = new Set<number>([scan.stmt.key]);
    const written = new Set<number>([scan.stmt.key, scan.stmt.value]);
    const body = scan.stmt.block.stmts as Stmt[];
    for (const st of body) {
        if (!LOCALS_ONLY.has(st.type)) return undefined;
        const s = st.stmt;
        if (st.type === "EqualStmt") {
            const literal = isLocal(s.a) && copies.has(s.a.value as number) && isLiteral(s.b) ? s.b : isLocal(s.b) && copies.has(s.b.value as number) && isLiteral(s.a) ? s.a : undefined;
            if (literal === undefined) continue;
            const nextTurn = bodyLiveOnEntry(scan);
            return [...written].some((l) => liveAfter(l) || nextTurn.has(l)) ? undefined : literal;
        }
        for (const l of ownWrites(st)) {
            written.add(l);
            copies.delete(l);
        }
        if (st.type === "AssignVarStmt" && isLocal(s.source) && copies.has(s.source.value as number)) copies.add(s.target);
    }
    return undefined;
}
