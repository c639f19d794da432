/**
 * planToJavaScript: OPA's plan IR written as the text of a JavaScript function body (./compile.ts
 * turns it into an evaluator), in passes a reader can follow, each pinned by its tests:
 *   1. prepare: the built-ins checked (compile.test.ts), the rules specialised (./specialize.ts,
 *      specialize.test.ts), the bodies that start alike fused (./fuse.ts, fuse.test.ts);
 *   2. analyse: the functions the entrypoint reaches, what each reads and whether it loops (what
 *      is remembered: compile.test.ts), each scan's order and joins (./join.ts, join.test.ts);
 *   3. write: every statement as code (CodeWriter: statements, collections, control flow, scans,
 *      joins), each function wrapped in its memo, then the evaluator around the plan's body.
 * Every agreement run (gatekeeper:wasm-oracle against opa, wasm-agree, test:gatekeeper) runs
 * the code it writes.
 */
import { PLAN_BUILTINS } from "./builtins";
import { planRefusal } from "./builtinStatus";
import { dataPathLocals, findJoin, raiseFreeFunctions, type JoinSite } from "./join";
import { allStatements, breaksOut, changedCollections, MAKES, ownReads, ownWrites, visitScans, type Block, type Func, type Operand, type Plan, type Stmt } from "./ir";
import { fuseBlocks } from "./fuse";
import { pinnedScanKey, specializeRules } from "./specialize";

export class UnsupportedPlan extends Error {}

interface Frame {
    label: string;
    loop: boolean;
}

/** The built-ins a plan calls that this compiler does not provide, sorted. */
export function missingPlanBuiltins(plan: Plan): string[] {
    return (plan.static.builtin_funcs ?? [])
        .map((b) => b.name)
        .filter((n) => !PLAN_BUILTINS.has(n))
        .sort();
}

/**
 * The first line of a plan compiled to JavaScript: names the format, the parameters the code
 * expects (the value operations, the built-ins by name) and what they do. Raised when the
 * compiled code's calls into this module change: code of another format is stale.
 */
export const PLAN_JS_FIRST_LINE = "// plan-js 3: OPA's plan compiled to JavaScript by policies/gatekeeper/plan/compile.ts (npm run gatekeeper:wasm); generated, do not edit";

/** Pass 1: the plan as the code is written from it (built-ins checked, rules specialised, bodies fused). */
function prepare(given: Plan) {
    const missing = missingPlanBuiltins(given);
    if (missing.length > 0) {
        const reasons = missing.map(planRefusal).filter((r): r is string => r !== undefined && / is refused: /.test(r));
        throw new UnsupportedPlan(`calls built-in function${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which the plan compiler does not provide${reasons.length > 0 ? ` (${reasons.join("; ")})` : ""}`);
    }
    // Rules scanned for elements of constant fields computed for those only, as topdown does (./specialize.ts).
    const specialized = specializeRules(given);
    const strings = (specialized.static.strings ?? []).map((s) => s.value);
    const literal = (o: Operand) => (o.type === "string_index" ? strings[o.value as number] : o.value);
    // The functions before fusion: what a re-evaluation after a conflict in fused scans runs (U).
    const asWritten = specialized.funcs?.funcs ?? [];
    const funcIndex = new Map(asWritten.map((f, i) => [f.name, i]));
    // Which functions cannot stop evaluation (for joins, ./join.ts): judged on the blocks as the planner wrote them.
    const raiseFree = raiseFreeFunctions(asWritten, funcIndex, literal);
    // Bodies that start alike run their shared statements once (./fuse.ts).
    const { plan, reordered } = fuseBlocks(specialized, { pureCall: (name) => funcIndex.has(name) || PLAN_BUILTINS.has(name) });
    const builtinNames = [...new Set((plan.static.builtin_funcs ?? []).map((b) => b.name))];
    return {
        strings,
        asWritten,
        funcIndex,
        raiseFree,
        plan,
        reordered,
        files: (plan.static.files ?? []).map((f) => f.value),
        funcs: plan.funcs?.funcs ?? [],
        builtinNames,
        builtinIndex: new Map(builtinNames.map((n, i) => [n, i])),
    };
}
type Prepared = ReturnType<typeof prepare>;

/** Pass 2: the functions the entrypoint reaches, what each reads and whether it loops, and how each scan is written. */
function analyse(prepared: Prepared, entrypoint: number) {
    const { plan, funcs, funcIndex, asWritten, reordered, raiseFree } = prepared;
    const readsInput = inputReaders(funcs, funcIndex);
    const readsData = inputReaders(funcs, funcIndex, 1);
    const loops = loopingFunctions(funcs, funcIndex);
    const func = (name: string) => {
        const i = funcIndex.get(name);
        return i === undefined ? undefined : { readsInput: readsInput[i], raiseFree: raiseFree[i] };
    };
    const p = plan.plans.plans[entrypoint];
    if (!p) throw new UnsupportedPlan(`has no entrypoint #${entrypoint}`);
    // Only the functions the entrypoint calls (a rule specialised for each of its callers, ./specialize.ts, may have none left).
    const reachable = new Set<number>();
    const reach = (blocks: readonly Block[]): void => {
        for (const st of allStatements(blocks)) {
            const k = st.type === "CallStmt" ? funcIndex.get(st.stmt.func) : undefined;
            if (k === undefined || reachable.has(k)) continue;
            reachable.add(k);
            reach(funcs[k].blocks);
            if (reordered.has(k)) reach(asWritten[k].blocks);
        }
    };
    reach(p.blocks);
    /** The scans whose order cannot be seen (scanIsOrderFree), and the joins (./join.ts), of each function and plan: one walk each. */
    const anyOrder = new Set<object>();
    const joins = new Map<object, JoinSite>();
    const pinned = new Map<object, Operand>();
    const analyseScans = (blocks: readonly Block[], params: readonly number[]) => {
        // Input and data are locals 0 and 1 of the planner's functions (the join's code names them so).
        const dataOnly = params[0] === 0 && params[1] === 1 ? dataPathLocals(blocks, params) : undefined;
        visitScans(blocks, (scan, liveAfter) => {
            const pin = pinnedScanKey(scan, liveAfter);
            if (pin !== undefined) return void pinned.set(scan.stmt, pin);
            if (scanIsOrderFree(scan, liveAfter)) anyOrder.add(scan.stmt);
            const join = dataOnly === undefined ? undefined : findJoin(scan, { dataOnly, func, liveAfter });
            if (join !== undefined) joins.set(scan.stmt, join);
        });
    };
    for (const idx of reachable) {
        analyseScans(funcs[idx].blocks, funcs[idx].params);
        if (reordered.has(idx)) analyseScans(asWritten[idx].blocks, asWritten[idx].params);
    }
    analyseScans(p.blocks, [0, 1]);
    return { entry: p, reachable, readsInput, readsData, loops, anyOrder, joins, pinned };
}
type Analysis = ReturnType<typeof analyse>;

/**
 * A plan compiled to the text of a JavaScript function body (parameters V, failed, conflict,
 * merge, NONE and need: ./compile.ts planEvaluator) that returns the plan's evaluator. Throws
 * UnsupportedPlan naming the first statement type or built-in it does not support.
 */
export function planToJavaScript(given: Plan, entrypoint = 0): string {
    const prepared = prepare(given);
    const analysis = analyse(prepared, entrypoint);
    const writer = new CodeWriter(prepared, analysis);
    const { funcs, builtinNames } = prepared;
    let code = "";
    funcs.forEach((f, idx) => {
        if (analysis.reachable.has(idx)) code += writer.functionCode(f, idx);
    });
    const main = writer.bodyOf(analysis.entry.blocks, [0, 1], null, "p");
    if (prepared.reordered.size === 0) code += `return function evaluate(l0,l1){T.begin();if(l1!==D){D=l1;X=new Array(${funcs.length});}M.fill(undefined);const rs=[];${main}return V.resultSet(rs);};`;
    else {
        // Fused scans met a conflict: evaluated again as written, which says which conflict comes first.
        code += `function run(l0,l1){M.fill(undefined);const rs=[];${main}return V.resultSet(rs);}\n`;
        code += `return function evaluate(l0,l1){T.begin();if(l1!==D){D=l1;X=new Array(${funcs.length});}try{return run(l0,l1);}catch(e){if(!V.isConflict(e))throw e;U=true;try{return run(l0,l1);}finally{U=false;}}};`;
    }
    const builtins = builtinNames.length > 0 ? `const [${builtinNames.map((_, i) => `B${i}`).join(",")}]=need(${JSON.stringify(builtinNames)});` : "";
    // M: rules' values in this evaluation; X: input-free functions' values for the data document D; Y: values of functions of their arguments only.
    // J: each join's index, with the data document's parts it was built from.
    // U: evaluating again with the functions as written (after a conflict in fused scans).
    return `${PLAN_JS_FIRST_LINE}\n"use strict";${builtins}let M=new Array(${funcs.length}),X,D={},Y=new Array(${funcs.length}),J=[],U=false;\n${writer.joinFunctions}${code}\n`;
}

/**
 * Pass 3: statements written as code. Labels are numbered in the order the code is written;
 * `mutated` and the data locals are those of the body being written.
 */
class CodeWriter {
    private labels = 0;
    /** The locals the function being written adds to (arrays, objects, sets). */
    private mutated = new Set<number>();
    /**
     * The locals that hold a part of the data document (data.inventory's maps), followed in
     * the order the code is written: a scan over one keeps its object's key list (such an object
     * is scanned again for every review). Only a hint: a wrong guess costs time or memory, not
     * correctness (a plain object is never changed).
     */
    private dataLocals = new Set<number>();
    private scanOverData = false;
    /** The joins' index builders (./join.ts), written before the functions. */
    joinFunctions = "";
    private joinSites = 0;

    constructor(
        private readonly prepared: Prepared,
        private readonly analysis: Analysis,
    ) {}

    private operand(o: Operand): string {
        if (o.type === "local") return `l${o.value}`;
        if (o.type === "bool") return o.value ? "true" : "false";
        if (o.type === "string_index") return JSON.stringify(this.prepared.strings[o.value as number]);
        throw new UnsupportedPlan(`uses the operand type ${(o as Operand).type}`);
    }

    private where(s: Record<string, any>): string {
        return JSON.stringify(`${this.prepared.files[s.file] ?? "?"}:${s.row}:${s.col}`);
    }

    private followData(st: Stmt): void {
        const s = st.stmt;
        const data = this.dataLocals;
        const fromData = (o: Operand | number) => (typeof o === "number" ? data.has(o) : o?.type === "local" && data.has(o.value as number));
        const mark = (l: number, yes: boolean) => (yes ? data.add(l) : data.delete(l));
        if (st.type === "ScanStmt") {
            // Judged before the statement's code is made: the scan reads its source first.
            this.scanOverData = fromData(s.source);
            mark(s.key, this.scanOverData);
            mark(s.value, this.scanOverData);
        } else if (st.type === "DotStmt" || st.type === "AssignVarStmt") mark(s.target, fromData(s.source));
        else for (const l of ownWrites(st)) data.delete(l);
    }

    /** A function of the plan with its memo (what is remembered, and for how long). */
    functionCode(f: Func, idx: number): string {
        const { reordered, asWritten } = this.prepared;
        const { readsInput, readsData, loops } = this.analysis;
        let code = "";
        const params = f.params.map((p) => `l${p}`);
        // A function that never reads the input gives the same result for the same data and
        // arguments: it is computed once per data document (and argument values), across
        // evaluations; a rule (no arguments) that reads the input, once per evaluation.
        // Only functions that loop are worth the look-up (a function of a few statements costs less).
        const acrossEvaluations = !readsInput[idx] && (f.params.length === 2 || loops[idx]);
        const memo = f.params.length === 2 || acrossEvaluations;
        // Reading neither input nor data, it depends on its arguments only: kept for the process (Y).
        const cache = readsData[idx] ? "X" : "Y";
        // A function whose scans were fused (./fuse.ts) runs as written while the evaluation is made again after a conflict (U).
        const body = `${reordered.has(idx) ? `if(U)return u${idx}(${params.join(",")});` : ""}${this.bodyOf(f.blocks, f.params, f.return, "f")}return l${f.return};`;
        if (reordered.has(idx)) code += `function u${idx}(${params.join(",")}){${this.bodyOf(asWritten[idx].blocks, asWritten[idx].params, asWritten[idx].return, "u")}return l${asWritten[idx].return};}\n`;
        if (memo) code += `function g${idx}(${params.join(",")}){${body}}\n`;
        const all = params.join(",");
        if (!memo) code += `function f${idx}(${all}){${body}}\n`;
        else if (f.params.length === 2) {
            const store = acrossEvaluations ? cache : "M";
            code += `function f${idx}(${all}){const m=${store}[${idx}];if(m!==undefined)return m===NONE?undefined:m;const r=g${idx}(${all});${store}[${idx}]=r===undefined?NONE:r;return r;}\n`;
        } else {
            const args = params.slice(2).join(",");
            const [get, set] = f.params.length === 3 ? ["get1", "set1"] : ["get", "set"];
            code += `function f${idx}(${all}){const c=${cache}[${idx}]??=new V.Memo();const m=c.${get}(${args});if(m!==undefined)return m===NONE?undefined:m;const r=g${idx}(${all});c.${set}(r===undefined?NONE:r,${args});return r;}\n`;
        }
        return code;
    }

    /** A function's or the plan's body: its locals declared, then each block labelled (`ret`: what a break past the top returns). */
    bodyOf(blocks: Block[], params: readonly number[], ret: number | null, prefix: string): string {
        const ls = [...locals(blocks, new Set(ret === null ? [] : [ret]))].filter((l) => !params.includes(l));
        let body = ls.length > 0 ? `let ${ls.map((l) => `l${l}`).join(",")};` : "";
        this.mutated = changedCollections(blocks);
        this.dataLocals = new Set(params[1] === 1 ? [1] : []);
        for (const b of blocks) {
            const label = `${prefix}${this.labels++}`;
            body += `${label}:{${this.block(b, [{ label, loop: false }], ret === null ? null : `l${ret}`)}}`;
        }
        return body;
    }

    /** Leaving `index`+1 blocks (BreakStmt): a break out of a block, to a scan's next element, or out of the function. */
    private jump(index: number, frames: Frame[], ret: string | null): string {
        const f = frames[frames.length - 1 - index];
        if (f === undefined) {
            if (ret === null) throw new UnsupportedPlan(`uses a break of ${index + 1} blocks out of a plan`);
            return `return ${ret};`;
        }
        return f.loop ? `continue ${f.label};` : `break ${f.label};`;
    }

    private block(b: Block, frames: Frame[], ret: string | null): string {
        let out = "";
        for (let at = 0; at < b.stmts.length; at++) {
            const st = b.stmts[at];
            this.followData(st);
            switch (st.type) {
                case "MakeArrayStmt":
                case "MakeObjectStmt": {
                    const made = this.collection(b, at);
                    out += made.code;
                    at = made.at;
                    break;
                }
                case "BlockStmt":
                case "BreakStmt":
                case "CallStmt":
                case "NotStmt":
                case "ReturnLocalStmt":
                case "ScanStmt":
                    out += this.control(st, frames, ret);
                    break;
                default:
                    out += this.statement(st, () => this.jump(0, frames, ret));
            }
        }
        return out;
    }

    /** A statement that assigns, tests or adds (`fail`: the code that leaves the innermost block). */
    private statement(st: Stmt, fail: () => string): string {
        const { type, stmt: s } = st;
        const operand = (o: Operand) => this.operand(o);
        const isLiteral = (o: Operand) => o.type !== "local";
        const strings = this.prepared.strings;
        switch (type) {
            case "ArrayAppendStmt":
                return `l${s.array}.push(${operand(s.value)});`;
            case "AssignIntStmt":
            case "MakeNumberIntStmt":
                return `l${s.target}=${Number(s.value)};`;
            case "AssignVarStmt":
                return `l${s.target}=${operand(s.source)};`;
            case "AssignVarOnceStmt": {
                const same = isLiteral(s.source) ? `l${s.target}===${operand(s.source)}` : `V.equal(l${s.target},${operand(s.source)})`;
                return `if(l${s.target}===undefined)l${s.target}=${operand(s.source)};else if(!(${same}))conflict(${this.where(s)},"var assignment conflict");`;
            }
            case "DotStmt":
                if (isLiteral(s.source)) return fail();
                if (s.key.type === "string_index" && !PROTOTYPE_KEYS.has(strings[s.key.value])) {
                    // A plain object's field read in place (the site's own inline cache): the key is no name Object.prototype has.
                    const src = operand(s.source);
                    const key = JSON.stringify(strings[s.key.value]);
                    return `l${s.target}=${plainObject(src)}?${src}${member(strings[s.key.value])}:V.dotString(${src},${key});if(l${s.target}===undefined)${fail()}`;
                }
                return `l${s.target}=V.${s.key.type === "string_index" ? "dotString" : "dot"}(${operand(s.source)},${operand(s.key)});if(l${s.target}===undefined)${fail()}`;
            case "EqualStmt":
            case "NotEqualStmt": {
                const [a, b2] = [s.a as Operand, s.b as Operand];
                // A literal (boolean or string) equals only the identical primitive.
                const same = isLiteral(a) || isLiteral(b2) ? `(${operand(a)}===${operand(b2)})` : `V.equal(${operand(a)},${operand(b2)})`;
                return type === "EqualStmt" ? `if(!${same})${fail()}` : `if(${same})${fail()}`;
            }
            case "IsArrayStmt":
                return isLiteral(s.source) ? fail() : `if(!Array.isArray(${operand(s.source)}))${fail()}`;
            case "IsObjectStmt":
                return isLiteral(s.source) ? fail() : `if(!V.isObject(${operand(s.source)}))${fail()}`;
            case "IsSetStmt":
                return isLiteral(s.source) ? fail() : `if(!(${operand(s.source)} instanceof V.RegoSet))${fail()}`;
            case "IsDefinedStmt":
                return `if(l${s.source}===undefined)${fail()}`;
            case "IsUndefinedStmt":
                return `if(l${s.source}!==undefined)${fail()}`;
            case "LenStmt":
                return `l${s.target}=V.length(${operand(s.source)});`;
            case "MakeNullStmt":
                return `l${s.target}=null;`;
            case "MakeNumberRefStmt": {
                const text = strings[s.Index];
                const n = Number(text);
                if (!Number.isFinite(n)) throw new UnsupportedPlan(`uses the number ${text}`);
                // An integer literal OPA writes as its digits: of at least 1e6, a bigint (../rego/values.ts).
                const big = /^-?\d+$/.test(text) && (BigInt(text) >= 1_000_000n || BigInt(text) <= -1_000_000n);
                return `l${s.target}=${big ? `${BigInt(text)}n` : n};`;
            }
            // A set the function never adds to is the shared empty one.
            case "MakeSetStmt":
                return this.mutated.has(s.target) ? `l${s.target}=new V.RegoSet();` : `l${s.target}=V.EMPTY_SET;`;
            case "NopStmt":
                return "";
            case "ObjectInsertStmt":
                return `l${s.object}.set(${operand(s.key)},${operand(s.value)});`;
            case "ObjectInsertOnceStmt":
                return `{const k=${operand(s.key)},v=${operand(s.value)},o=l${s.object}.get(k);if(o===undefined)l${s.object}.set(k,v);else if(!V.equal(o,v))conflict(${this.where(s)},"object insert conflict");}`;
            case "ObjectMergeStmt":
                return `l${s.target}=merge(l${s.a},l${s.b});`;
            case "SetAddStmt":
                return `l${s.set}.add(${operand(s.value)});`;
            case "ResetLocalStmt":
                return `l${s.target}=undefined;`;
            case "ResultSetAddStmt":
                return `rs.push(l${s.value});`;
            default:
                throw new UnsupportedPlan(`uses the statement ${type}`);
        }
    }

    /**
     * MakeArrayStmt and MakeObjectStmt, with the appends or inserts that follow them made one
     * literal (`at`: the last statement written). A collection the function never adds to is the
     * shared empty one (object.get's default {}).
     */
    private collection(b: Block, at: number): { code: string; at: number } {
        const s = b.stmts[at].stmt;
        const operand = (o: Operand) => this.operand(o);
        if (b.stmts[at].type === "MakeArrayStmt") {
            if (!this.mutated.has(s.target)) return { code: `l${s.target}=V.EMPTY_ARRAY;`, at };
            // The appends that follow, made one literal (sprintf's arguments): no growing.
            const items: string[] = [];
            while (b.stmts[at + 1]?.type === "ArrayAppendStmt" && b.stmts[at + 1].stmt.array === s.target) items.push(operand(b.stmts[++at].stmt.value));
            return { code: `l${s.target}=[${items.join(",")}];`, at };
        }
        if (!this.mutated.has(s.target)) return { code: `l${s.target}=V.EMPTY_OBJECT;`, at };
        // The inserts of distinct string keys that follow, made with the object (no conflict can arise in a new object).
        const keys: string[] = [];
        const vals: string[] = [];
        for (let next = b.stmts[at + 1]; ; next = b.stmts[at + 1]) {
            if ((next?.type !== "ObjectInsertStmt" && next?.type !== "ObjectInsertOnceStmt") || next.stmt.object !== s.target || next.stmt.key.type !== "string_index") break;
            const key = JSON.stringify(this.prepared.strings[next.stmt.key.value]);
            if (keys.includes(key)) break;
            keys.push(key);
            vals.push(operand(next.stmt.value));
            at++;
        }
        return { code: keys.length === 0 ? `l${s.target}=new V.RegoObject();` : `l${s.target}=new V.RegoObject([${keys.join(",")}],[${vals.join(",")}]);`, at };
    }

    /** The statements that open blocks, leave them or call: blocks, breaks, calls, not, return, scans (and joins). */
    private control(st: Stmt, frames: Frame[], ret: string | null): string {
        const { type, stmt: s } = st;
        const fail = () => this.jump(0, frames, ret);
        switch (type) {
            case "BlockStmt": {
                let out = "";
                for (const inner of s.blocks as Block[]) {
                    const label = `b${this.labels++}`;
                    out += `${label}:{${this.block(inner, [...frames, { label, loop: false }], ret)}}`;
                }
                return out;
            }
            case "BreakStmt":
                return this.jump(s.index, frames, ret);
            case "CallStmt": {
                const { funcIndex, builtinIndex } = this.prepared;
                const args = (s.args as Operand[]).map((o) => this.operand(o)).join(",");
                const fn = funcIndex.get(s.func);
                let out: string;
                if (fn !== undefined) out = `l${s.result}=f${fn}(${args});`;
                // A built-in that fails is undefined (Gatekeeper's non-strict built-in errors); a conflict is not a failure.
                else if (builtinIndex.has(s.func)) out = this.inlineBuiltin(s.func, s.args as Operand[], `l${s.result}`) ?? `try{l${s.result}=B${builtinIndex.get(s.func)}(${args});}catch(e){l${s.result}=failed(e);}`;
                else throw new UnsupportedPlan(`calls ${s.func}, which the plan does not define`);
                return out + `if(l${s.result}===undefined)${fail()}`;
            }
            case "NotStmt": {
                const label = `n${this.labels++}`;
                return `{let c=true;${label}:{${this.block(s.block, [...frames, { label, loop: false }], ret)}c=false;}if(!c)${fail()}}`;
            }
            case "ReturnLocalStmt":
                return ret === null ? `return;` : `return l${s.source};`;
            default: {
                // ScanStmt
                const join = this.analysis.joins.get(s);
                if (join !== undefined) return this.joinCode(join, frames, ret);
                return this.scanLoop(s, frames, this.scanOverData, (inner) => this.block(s.block, inner, ret));
            }
        }
    }

    /** A scan's loop around its body (`body` given the frames inside the loop): the scan's own code, and a join's levels. */
    private scanLoop(s: Record<string, any>, frames: Frame[], overData: boolean, body: (inner: Frame[]) => string): string {
        const outer = `s${this.labels++}`;
        const loop = `s${this.labels++}`;
        const i = `i${this.labels}`;
        return (
            `${outer}:{const src=l${s.source},ks=${this.keysOf(s, overData)},n=ks===null?src.length:ks.length;` +
            `${loop}:for(let ${i}=0;${i}<n;${i}++){if(--T.n<0)T.spent();` +
            // An input object's key holding undefined is not there (JSON has none): skipped here, not listed apart.
            `if(ks===null){l${s.key}=${i};l${s.value}=src[${i}];}else{l${s.key}=ks[${i}];l${s.value}=V.member(src,ks[${i}]);if(l${s.value}===undefined)continue ${loop};}` +
            body([...frames, { label: outer, loop: false }, { label: loop, loop: true }]) +
            `}}`
        );
    }

    /**
     * The code of a built-in call that cannot raise, written in place (no call through the
     * built-in's table, no try): the result set to its value, or undefined where the built-in
     * fails (as `failed` makes a built-in's error). Undefined for the others.
     */
    private inlineBuiltin(name: string, args: readonly Operand[], target: string): string | undefined {
        const [a, b, c] = args.map((o) => this.operand(o));
        switch (name) {
            case "object.get": {
                // object.get(o, "key", default) on a plain object: its field read in place (the key is no name Object.prototype has).
                if (args[1]?.type !== "string_index" || PROTOTYPE_KEYS.has(this.prepared.strings[args[1].value as number])) return undefined;
                return `if(${plainObject(a)}){${target}=${a}${member(this.prepared.strings[args[1].value as number])};if(${target}===undefined)${target}=${c};}else ${target}=V.objectGetOr(${a},${b},${c});`;
            }
            case "neq":
                return `${target}=!V.equal(${a},${b});`;
            case "gt":
            case "gte":
            case "lt":
            case "lte":
                return `${target}=V.compare(${a},${b})${{ gt: ">", gte: ">=", lt: "<", lte: "<=" }[name]}0;`;
            case "count":
                return `${target}=V.count(${a});`;
            case "is_number":
                return `${target}=typeof ${a}==="number"||typeof ${a}==="bigint";`;
            case "is_string":
            case "is_boolean":
                return `${target}=typeof ${a}===${JSON.stringify(name.slice(3))};`;
            case "is_null":
                return `${target}=${a}===null;`;
            case "is_array":
                return `${target}=Array.isArray(${a});`;
            case "is_object":
                return `${target}=V.isObject(${a});`;
        }
        return undefined;
    }

    /** The keys a scan visits: the one its body requires (pinned), in any order, or in OPA's. */
    private keysOf(s: Record<string, any>, overData: boolean): string {
        const pin = this.analysis.pinned.get(s);
        if (pin !== undefined) return `V.scanKeysPinned(src,${this.operand(pin)})`;
        return `V.${this.analysis.anyOrder.has(s) ? "scanKeysAnyOrder" : "scanKeys"}(src${overData ? ",true" : ""})`;
    }

    /**
     * A join (./join.ts) in place of its nest of scans: its index, built by a function of the data
     * document's parts it reads (kept while they are the same objects), looked up by the value
     * compared; for each element found, its locals set, then the probe statements and the rest.
     */
    private joinCode(join: JoinSite, frames: Frame[], ret: string | null): string {
        const site = this.joinSites++;
        const free = join.free.map((l) => `l${l}`);
        const args = ["l0", "l1", ...free].join(",");
        const dataParts = join.parts.map((level) => level.filter((p) => p.data).map((p) => p.st));
        const own = [...locals(dataParts.map((stmts) => ({ stmts })), new Set(join.tuple))].filter((l) => l > 1 && !join.free.includes(l));
        const level = (k: number, outerFrames: Frame[]): string =>
            this.scanLoop(join.scans[k].stmt, outerFrames, true, (inner) => this.block({ stmts: dataParts[k] }, inner, null) + (k + 1 < join.scans.length ? level(k + 1, inner) : `ix.add(l${join.probe},[${join.tuple.map((l) => `l${l}`).join(",")}]);`));
        this.joinFunctions += `function j${site}(${args}){${own.length > 0 ? `let ${own.map((l) => `l${l}`).join(",")};` : ""}const ix=new V.JoinIndex();${level(0, [])}return ix;}\n`;
        const stale = ["c[0]!==l1", ...free.map((l, i) => `c[${i + 1}]!==${l}`)].join("||");
        const outer = `j${this.labels++}`;
        const loop = `j${this.labels++}`;
        const q = `q${this.labels}`;
        const probes = join.parts.flatMap((level) => level.filter((p) => !p.data && !p.hoist).map((p) => p.st));
        // Hoisted probes fail for every element alike: the nest is left.
        const hoisted = join.parts.flatMap((level) => level.filter((p) => p.hoist).map((p) => p.st));
        return (
            `${outer}:{${this.block({ stmts: hoisted }, [...frames, { label: outer, loop: false }], ret)}let c=J[${site}];if(c===undefined||${stale}){c=[l1,${free.map((l) => `${l},`).join("")}j${site}(${args})];J[${site}]=c;}` +
            `const ts=c[${free.length + 1}].get(${this.operand(join.key)});${loop}:for(let ${q}=0;${q}<ts.length;${q}++){if(--T.n<0)T.spent();const t=ts[${q}];${join.tuple.map((l, i) => `l${l}=t[${i}];`).join("")}` +
            this.block({ stmts: [...probes, ...join.rest] }, [...frames, { label: outer, loop: false }, { label: loop, loop: true }], ret) +
            `}}`
        );
    }
}

/** Every local the blocks read or set, added to `into`. */
function locals(blocks: readonly Block[], into: Set<number>): Set<number> {
    for (const st of allStatements(blocks)) {
        for (const l of ownReads(st)) into.add(l);
        for (const l of ownWrites(st)) into.add(l);
    }
    return into;
}

/**
 * Whether a value is a plain object (of the input or data), as code: null and undefined are not,
 * a primitive's constructor is its wrapper's, a JSON object's is Object (or its own field
 * "constructor", never Object itself).
 */
const plainObject = (v: string) => `${v}!=null&&${v}.constructor===Object`;

/** A field read in code: `.name` for a key that is an identifier, else `["key"]`. */
const member = (key: string) => (/^[A-Za-z_$][\w$]*$/.test(key) ? `.${key}` : `[${JSON.stringify(key)}]`);

/** The names a plain object inherits (its field of such a name is read by V.dotString, which asks whether it is its own). */
const PROTOTYPE_KEYS = new Set([...Object.getOwnPropertyNames(Object.prototype), "__proto__"]);

/** Built-ins that cost about as much as a look-up of their result (the others, such as sprintf, regex.match or sort, cost more). */
const CHEAP_BUILTINS = new Set([
    "equal", "neq", "gt", "gte", "lt", "lte", "plus", "minus", "mul", "div", "rem", "abs", "count",
    "is_array", "is_boolean", "is_null", "is_number", "is_object", "is_set", "is_string", "type_name",
    "object.get", "startswith", "endswith", "contains", "internal.member_2", "internal.member_3",
]);

/** Whether each function scans a collection or calls a costly built-in itself: what is worth remembering. */
function loopingFunctions(funcs: readonly Func[], funcIndex: ReadonlyMap<string, number>): boolean[] {
    const loops = funcs.map((f) => {
        for (const st of allStatements(f.blocks)) {
            if (st.type === "ScanStmt") return true;
            if (st.type === "CallStmt" && !funcIndex.has(st.stmt.func) && !CHEAP_BUILTINS.has(st.stmt.func)) return true;
        }
        return false;
    });
    // Not passed on to the callers: a caller of a remembered function is often called with
    // arguments that never repeat (each pair of objects), where remembering costs more.
    return loops;
}

/**
 * Whether a scan (ScanStmt) over a set or an object has an order that cannot be seen (`live`:
 * whether a local may be read after the scan, visitScans): topdown scans them in their keys' order, which costs a sort; a scan may take any order
 * when no element's turn can change the outcome: its body (not the functions it calls, which
 * only compute values) leaves the loop by no break and no return, changes no array or object
 * it did not make in the same turn but by adding to a set or inserting once (the same
 * conflict in any order), and sets no local that may be read after the scan before being set
 * again (or on an enclosing scan's next turn) but by assigning once.
 */
function scanIsOrderFree(scan: Stmt, live: (local: number) => boolean): boolean {
    const body = [...allStatements([scan.stmt.block])];
    const made = new Set(body.filter((st) => MAKES.has(st.type)).map((st) => st.stmt.target as number));
    if (breaksOut(scan.stmt.block.stmts, 0)) return false;
    for (const st of body) {
        if (st.type === "ReturnLocalStmt" || st.type === "WithStmt" || st.type === "CallDynamicStmt") return false;
        if (st.type === "ArrayAppendStmt" && !made.has(st.stmt.array)) return false;
        if (st.type === "ObjectInsertStmt" && !made.has(st.stmt.object)) return false;
        if (ownWrites(st).some(live)) return false;
    }
    return !ownWrites(scan).some(live);
}

/**
 * Whether each function reads the input (local 0; or, given 1, data) other than by handing it to
 * the functions it calls (every call passes input and data first), directly or through a
 * function it calls.
 */
function inputReaders(funcs: readonly Func[], funcIndex: ReadonlyMap<string, number>, local: 0 | 1 = 0): boolean[] {
    const direct: boolean[] = [];
    const calls: Set<number>[] = [];
    funcs.forEach((f, i) => {
        calls.push(new Set());
        // Input and data are locals 0 and 1 of every function the planner makes; another layout is taken as reading them.
        let reads = f.params[0] !== 0 || f.params[1] !== 1;
        for (const st of allStatements(f.blocks)) {
            if (reads) break;
            const callee = st.type === "CallStmt" ? funcIndex.get(st.stmt.func) : undefined;
            if (callee === undefined) {
                reads = ownReads(st).has(local);
                continue;
            }
            calls[i].add(callee);
            // Every call hands on input and data as its first two arguments: that is not a read.
            reads = (st.stmt.args as Operand[]).some((a, n) => a.type === "local" && a.value === local && n !== local);
        }
        direct.push(reads);
    });
    const reads = [...direct];
    for (let changed = true; changed; ) {
        changed = false;
        funcs.forEach((_, i) => {
            if (!reads[i] && [...calls[i]].some((c) => reads[c])) {
                reads[i] = true;
                changed = true;
            }
        });
    }
    return reads;
}

