/**
 * OPA's plan IR (`opa build -t plan`, v1/ir of OPA 1.17.1) compiled to JavaScript: the text of
 * one function per plan (planToJavaScript; npm run gatekeeper:wasm writes it beside the plan),
 * which the pack turns into the evaluator of the policy on the input and data as they are
 * (planEvaluator, ./values.ts): the same IR `opa build -t wasm` compiles, and the same control
 * flow as its Wasm compiler (internal/compiler/wasm/wasm.go), statement for statement:
 *   - a statement that is undefined leaves the innermost block (a scan's body: goes on to the
 *     next element); BreakStmt{index} leaves index+1 blocks, where a scan counts as two (its loop,
 *     then the block around it);
 *   - a function of two parameters (a rule: input and data) is computed once per evaluation;
 *   - AssignVarOnceStmt and ObjectInsertOnceStmt abort with the Wasm module's conflict texts
 *     (`<file>:<row>:<col>: var assignment conflict`), which ../wasm/rule.ts words as topdown does.
 * but for joins (./join.ts): a scan over the data document compared with a value fixed before it
 * is looked up in an index made once per data document. A plan using a statement or a built-in
 * this compiler lacks is refused, naming it.
 */
import { createHash, randomBytes } from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import vm from "node:vm";
import { templateTimeBudgetMs } from "../budget";
import { PLAN_BUILTINS } from "./builtins";
import { planRefusal } from "./builtinStatus";
import { dataPathLocals, findJoin, raiseFreeFunctions, type JoinSite } from "./join";
import { allStatements, breaksOut, changedCollections, MAKES, ownReads, ownWrites, visitScans, type Block, type Func, type Operand, type Plan, type Stmt } from "./ir";
import { fuseBlocks } from "./fuse";
import { pinnedScanKey, specializeRules } from "./specialize";
import * as values from "./values";

export type { Plan } from "./ir";

/** An error that stops evaluation (a conflict), with the Wasm module's text. */
export class PlanEvalError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "PlanEvalError";
    }
}

/** The plan's entrypoint as a function of input and data, returning its result set (in OPA's order). */
export type PlanEvaluator = (input: unknown, data: unknown) => unknown[];

interface Frame {
    label: string;
    loop: boolean;
}

class UnsupportedPlan extends Error {}

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

const evaluators = new Map<string, PlanEvaluator>();

/** Forgets every loaded evaluator (the next load makes it again, as a new process does): for measurements of a cold start. */
export function forgetCompiledPlans(): void {
    evaluators.clear();
}

/**
 * The evaluator of a plan compiled to JavaScript (planToJavaScript's text), made once per process:
 * the same text (or digest of it) gives the same evaluator, whose code stays warm across loads
 * (an evaluator keeps no state between evaluations but its caches of functions that do not read
 * the input, keyed by the data document). Throws when the text is of another format or calls a
 * built-in this module lacks. `name`: the file the text is from, which stack traces name.
 */
export function planEvaluator(js: string, digest: string = js, name?: string): PlanEvaluator {
    let evaluator = evaluators.get(digest);
    if (evaluator === undefined) {
        if (!js.startsWith(`${PLAN_JS_FIRST_LINE}\n`)) throw new Error(`the compiled plan is not of the current format (its first line is not ${JSON.stringify(PLAN_JS_FIRST_LINE)})`);
        // Named for stack traces and profiles.
        evaluator = instantiate(js, digest, name?.replace(/\s/g, "_"));
        evaluators.set(digest, evaluator);
    }
    return evaluator;
}

/**
 * The code cache of compiled plans: the bytecode V8 made of a plan's functions in an earlier
 * process, so that a new process (each pulumi preview) neither parses the plan's text again nor
 * compiles the functions it calls. Kept per V8 version under OPS_PLAN_CODE_CACHE (a directory;
 * `off`, in any case: none, and nothing is created), by default $XDG_CACHE_HOME/ops-env/plan-js
 * (~/.cache/ops-env/plan-js). V8 checks an entry only against its own version, its flags and
 * the source's length, not its text: so an entry is named by the sha256 of the plan's text and
 * carries that digest and the digest of its own bytes, both checked before V8 sees it (an entry
 * of another text, or with flipped bits, is not used but replaced). The directories must be
 * the user's own and writable by no one else, and no symbolic link (else the cache is not used,
 * and a line says why); entries are read without following links, and written when the process
 * exits to a new file of a random name (created exclusively, never through a link) renamed
 * into place. A cache that cannot be written is no error: the next process compiles again.
 */
export function codeCacheDir(): string | undefined {
    const setting = process.env.OPS_PLAN_CODE_CACHE;
    if (setting !== undefined && setting.trim().toLowerCase() === "off") return undefined;
    const root = setting || path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache"), "ops-env", "plan-js");
    const dir = path.join(root, `v8-${process.versions.v8}`);
    const problem = privateDirectoryProblem(root, setting ? "OPS_PLAN_CODE_CACHE" : "the default") ?? privateDirectoryProblem(dir, "its version folder");
    if (problem === undefined) return dir;
    if (!codeCacheWarned) process.stderr.write(`plan code cache not used: ${problem}\n`);
    codeCacheWarned = true;
    return undefined;
}
let codeCacheWarned = false;

/** Why a cache directory (made when missing, mode 0700) cannot be trusted: not a directory, a link, another user's, or writable by others. */
function privateDirectoryProblem(dir: string, what: string): string | undefined {
    try {
        fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
        const st = fs.lstatSync(dir);
        if (st.isSymbolicLink()) return `${dir} (${what}) is a symbolic link; give a directory of your own`;
        if (!st.isDirectory()) return `${dir} (${what}) is not a directory; set OPS_PLAN_CODE_CACHE to a directory, or off`;
        if (typeof process.getuid === "function" && st.uid !== process.getuid()) return `${dir} (${what}) belongs to another user`;
        if ((st.mode & 0o022) !== 0) return `${dir} (${what}) is writable by other users (mode ${(st.mode & 0o777).toString(8)}); make it 0700`;
        return undefined;
    } catch (err) {
        return `${dir} (${what}): ${(err as NodeJS.ErrnoException).code ?? (err as Error).message}`;
    }
}

const CACHE_MAGIC = "ops plan-js code cache 1\n";
const hex = (b: string | Uint8Array) => createHash("sha256").update(b).digest("hex");

/** An entry's V8 data, when the file is a regular file of this user holding the digest of this text and of its own data. */
function readCodeCache(file: string, textDigest: string): Buffer | undefined {
    let fd: number | undefined;
    try {
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW);
        const st = fs.fstatSync(fd);
        if (!st.isFile() || (typeof process.getuid === "function" && st.uid !== process.getuid())) return undefined;
        const bytes = fs.readFileSync(fd);
        const head = CACHE_MAGIC.length + 130;
        if (bytes.length <= head || bytes.subarray(0, CACHE_MAGIC.length).toString("latin1") !== CACHE_MAGIC) return undefined;
        const [text, data] = bytes.subarray(CACHE_MAGIC.length, head).toString("latin1").split("\n");
        const cached = bytes.subarray(head);
        return text === textDigest && data === hex(cached) ? cached : undefined;
    } catch {
        return undefined;
    } finally {
        if (fd !== undefined) fs.closeSync(fd);
    }
}

/** Writes an entry: a new file of a random name, created exclusively (never through a link), renamed into place. */
function writeCodeCache(file: string, textDigest: string, data: Buffer): void {
    const tmp = `${file}.${process.pid}.${randomBytes(8).toString("hex")}.tmp`;
    let fd: number | undefined;
    try {
        fd = fs.openSync(tmp, fs.constants.O_WRONLY | fs.constants.O_CREAT | fs.constants.O_EXCL | fs.constants.O_NOFOLLOW, 0o600);
        fs.writeSync(fd, Buffer.concat([Buffer.from(`${CACHE_MAGIC}${textDigest}\n${hex(data)}\n`, "latin1"), data]));
        fs.closeSync(fd);
        fd = undefined;
        fs.renameSync(tmp, file);
    } catch {
        if (fd !== undefined) fs.closeSync(fd);
        fs.rmSync(tmp, { force: true });
    }
}

const pendingCodeCaches: { script: vm.Script; file: string; digest: string }[] = [];

function writeCodeCaches(): void {
    for (const { script, file, digest } of pendingCodeCaches.splice(0)) writeCodeCache(file, digest, script.createCachedData());
}

/**
 * The evaluator of a plan's JavaScript, its bytecode taken from the code cache where the entry
 * is of this text and V8 accepts it (`digest`: the text's sha256; no cache without one).
 */
function instantiate(js: string, digest?: string, name?: string): PlanEvaluator {
    // The caller computed the digest from this very text (loadWasmTemplate: sha256 of the file it read).
    const own = digest === undefined ? undefined : /^sha256:([0-9a-f]{64})$/.exec(digest)?.[1];
    const dir = own === undefined ? undefined : codeCacheDir();
    const file = dir && path.join(dir, `${own}.bin`);
    const cachedData = file ? readCodeCache(file, own!) : undefined;
    const script = new vm.Script(`(function(V,failed,conflict,merge,NONE,need,T){${js}\n})`, { filename: name, cachedData });
    if (file && (cachedData === undefined || script.cachedDataRejected)) {
        if (pendingCodeCaches.length === 0) process.once("exit", writeCodeCaches);
        pendingCodeCaches.push({ script, file, digest: own! });
    }
    return (script.runInThisContext() as (...args: unknown[]) => PlanEvaluator)(RUNTIME, failed, conflict, merge, NONE, need, TIME);
}

/** The built-ins compiled code asks for by name; one this module lacks is an error naming it. */
function need(names: readonly string[]): ((...args: unknown[]) => unknown)[] {
    const missing = names.filter((n) => !PLAN_BUILTINS.has(n));
    if (missing.length > 0) throw new Error(`the compiled plan calls ${missing.join(", ")}, which the plan runtime does not provide`);
    return names.map((n) => PLAN_BUILTINS.get(n)!);
}

/** Compiles a plan to an evaluator (not kept: planEvaluator keeps loaded ones); throws naming the first statement type or built-in it does not support. */
export function compilePlan(plan: Plan, entrypoint = 0): PlanEvaluator {
    return instantiate(planToJavaScript(plan, entrypoint));
}

/**
 * A plan compiled to the text of a JavaScript function body (parameters V, failed, conflict,
 * merge, NONE and need: planEvaluator) that returns the plan's evaluator. Throws UnsupportedPlan
 * naming the first statement type or built-in it does not support.
 */
export function planToJavaScript(given: Plan, entrypoint = 0): string {
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
    const files = (plan.static.files ?? []).map((f) => f.value);
    const funcs = plan.funcs?.funcs ?? [];
    const builtinNames = [...new Set((plan.static.builtin_funcs ?? []).map((b) => b.name))];
    const builtinIndex = new Map(builtinNames.map((n, i) => [n, i]));
    let labels = 0;

    const operand = (o: Operand): string => {
        if (o.type === "local") return `l${o.value}`;
        if (o.type === "bool") return o.value ? "true" : "false";
        if (o.type === "string_index") return JSON.stringify(strings[o.value as number]);
        throw new UnsupportedPlan(`uses the operand type ${(o as Operand).type}`);
    };
    const isLiteral = (o: Operand) => o.type !== "local";
    const where = (s: Record<string, any>) => JSON.stringify(`${files[s.file] ?? "?"}:${s.row}:${s.col}`);

    /**
     * The locals that hold a part of the data document (data.inventory's maps), followed in
     * the order the code is written: a scan over one keeps its object's key list (such an object
     * is scanned again for every review). Only a hint: a wrong guess costs time or memory, not
     * correctness (a plain object is never changed).
     */
    let dataLocals = new Set<number>();
    const followData = (st: Stmt) => {
        const s = st.stmt;
        const fromData = (o: Operand | number) => (typeof o === "number" ? dataLocals.has(o) : o?.type === "local" && dataLocals.has(o.value as number));
        const mark = (l: number, yes: boolean) => (yes ? dataLocals.add(l) : dataLocals.delete(l));
        if (st.type === "ScanStmt") {
            // Judged before the statement's code is made: the scan reads its source first.
            scanOverData = fromData(s.source);
            mark(s.key, scanOverData);
            mark(s.value, scanOverData);
        } else if (st.type === "DotStmt" || st.type === "AssignVarStmt") mark(s.target, fromData(s.source));
        else for (const l of ownWrites(st)) dataLocals.delete(l);
    };
    let scanOverData = false;

    /** The locals the function being compiled adds to (arrays, objects, sets). */
    let mutated = new Set<number>();

    function block(b: Block, frames: Frame[], ret: string | null): string {
        const jump = (index: number): string => {
            const f = frames[frames.length - 1 - index];
            if (f === undefined) {
                if (ret === null) throw new UnsupportedPlan(`uses a break of ${index + 1} blocks out of a plan`);
                return `return ${ret};`;
            }
            return f.loop ? `continue ${f.label};` : `break ${f.label};`;
        };
        const fail = () => jump(0);
        let out = "";
        for (let at = 0; at < b.stmts.length; at++) {
            const st = b.stmts[at];
            const { type, stmt: s } = st;
            followData(st);
            switch (type) {
                case "ArrayAppendStmt":
                    out += `l${s.array}.push(${operand(s.value)});`;
                    break;
                case "AssignIntStmt":
                case "MakeNumberIntStmt":
                    out += `l${s.target}=${Number(s.value)};`;
                    break;
                case "AssignVarStmt":
                    out += `l${s.target}=${operand(s.source)};`;
                    break;
                case "AssignVarOnceStmt": {
                    const same = isLiteral(s.source) ? `l${s.target}===${operand(s.source)}` : `V.equal(l${s.target},${operand(s.source)})`;
                    out += `if(l${s.target}===undefined)l${s.target}=${operand(s.source)};else if(!(${same}))conflict(${where(s)},"var assignment conflict");`;
                    break;
                }
                case "BlockStmt":
                    for (const inner of s.blocks as Block[]) {
                        const label = `b${labels++}`;
                        out += `${label}:{${block(inner, [...frames, { label, loop: false }], ret)}}`;
                    }
                    break;
                case "BreakStmt":
                    out += jump(s.index);
                    break;
                case "CallStmt": {
                    const args = (s.args as Operand[]).map(operand).join(",");
                    const fn = funcIndex.get(s.func);
                    if (fn !== undefined) out += `l${s.result}=f${fn}(${args});`;
                    // A built-in that fails is undefined (Gatekeeper's non-strict built-in errors); a conflict is not a failure.
                    else if (builtinIndex.has(s.func)) out += inlineBuiltin(s.func, s.args as Operand[], `l${s.result}`) ?? `try{l${s.result}=B${builtinIndex.get(s.func)}(${args});}catch(e){l${s.result}=failed(e);}`;
                    else throw new UnsupportedPlan(`calls ${s.func}, which the plan does not define`);
                    out += `if(l${s.result}===undefined)${fail()}`;
                    break;
                }
                case "DotStmt":
                    if (isLiteral(s.source)) out += fail();
                    else if (s.key.type === "string_index" && !PROTOTYPE_KEYS.has(strings[s.key.value])) {
                        // A plain object's field read in place (the site's own inline cache): the key is no name Object.prototype has.
                        const src = operand(s.source);
                        const key = JSON.stringify(strings[s.key.value]);
                        out += `l${s.target}=${plainObject(src)}?${src}${member(strings[s.key.value])}:V.dotString(${src},${key});if(l${s.target}===undefined)${fail()}`;
                    } else out += `l${s.target}=V.${s.key.type === "string_index" ? "dotString" : "dot"}(${operand(s.source)},${operand(s.key)});if(l${s.target}===undefined)${fail()}`;
                    break;
                case "EqualStmt":
                case "NotEqualStmt": {
                    const [a, b2] = [s.a as Operand, s.b as Operand];
                    // A literal (boolean or string) equals only the identical primitive.
                    const same = isLiteral(a) || isLiteral(b2) ? `(${operand(a)}===${operand(b2)})` : `V.equal(${operand(a)},${operand(b2)})`;
                    out += type === "EqualStmt" ? `if(!${same})${fail()}` : `if(${same})${fail()}`;
                    break;
                }
                case "IsArrayStmt":
                    out += isLiteral(s.source) ? fail() : `if(!Array.isArray(${operand(s.source)}))${fail()}`;
                    break;
                case "IsObjectStmt":
                    out += isLiteral(s.source) ? fail() : `if(!V.isObject(${operand(s.source)}))${fail()}`;
                    break;
                case "IsSetStmt":
                    out += isLiteral(s.source) ? fail() : `if(!(${operand(s.source)} instanceof V.RegoSet))${fail()}`;
                    break;
                case "IsDefinedStmt":
                    out += `if(l${s.source}===undefined)${fail()}`;
                    break;
                case "IsUndefinedStmt":
                    out += `if(l${s.source}!==undefined)${fail()}`;
                    break;
                case "LenStmt":
                    out += `l${s.target}=V.length(${operand(s.source)});`;
                    break;
                // A collection the function never adds to is the shared empty one (object.get's default {}, an empty set).
                case "MakeArrayStmt": {
                    if (!mutated.has(s.target)) {
                        out += `l${s.target}=V.EMPTY_ARRAY;`;
                        break;
                    }
                    // The appends that follow, made one literal (sprintf's arguments): no growing.
                    const items: string[] = [];
                    while (b.stmts[at + 1]?.type === "ArrayAppendStmt" && b.stmts[at + 1].stmt.array === s.target) items.push(operand(b.stmts[++at].stmt.value));
                    out += `l${s.target}=[${items.join(",")}];`;
                    break;
                }
                case "MakeNullStmt":
                    out += `l${s.target}=null;`;
                    break;
                case "MakeNumberRefStmt": {
                    const text = strings[s.Index];
                    const n = Number(text);
                    if (!Number.isFinite(n)) throw new UnsupportedPlan(`uses the number ${text}`);
                    // An integer literal OPA writes as its digits: of at least 1e6, a bigint (./values.ts).
                    const big = /^-?\d+$/.test(text) && (BigInt(text) >= 1_000_000n || BigInt(text) <= -1_000_000n);
                    out += `l${s.target}=${big ? `${BigInt(text)}n` : n};`;
                    break;
                }
                case "MakeObjectStmt": {
                    if (!mutated.has(s.target)) {
                        out += `l${s.target}=V.EMPTY_OBJECT;`;
                        break;
                    }
                    // The inserts of distinct string keys that follow, made with the object (no conflict can arise in a new object).
                    const keys: string[] = [];
                    const vals: string[] = [];
                    for (let next = b.stmts[at + 1]; ; next = b.stmts[at + 1]) {
                        if ((next?.type !== "ObjectInsertStmt" && next?.type !== "ObjectInsertOnceStmt") || next.stmt.object !== s.target || next.stmt.key.type !== "string_index") break;
                        const key = JSON.stringify(strings[next.stmt.key.value]);
                        if (keys.includes(key)) break;
                        keys.push(key);
                        vals.push(operand(next.stmt.value));
                        at++;
                    }
                    out += keys.length === 0 ? `l${s.target}=new V.RegoObject();` : `l${s.target}=new V.RegoObject([${keys.join(",")}],[${vals.join(",")}]);`;
                    break;
                }
                case "MakeSetStmt":
                    out += mutated.has(s.target) ? `l${s.target}=new V.RegoSet();` : `l${s.target}=V.EMPTY_SET;`;
                    break;
                case "NopStmt":
                    break;
                case "NotStmt": {
                    const label = `n${labels++}`;
                    out += `{let c=true;${label}:{${block(s.block, [...frames, { label, loop: false }], ret)}c=false;}if(!c)${fail()}}`;
                    break;
                }
                case "ObjectInsertStmt":
                    out += `l${s.object}.set(${operand(s.key)},${operand(s.value)});`;
                    break;
                case "ObjectInsertOnceStmt":
                    out += `{const k=${operand(s.key)},v=${operand(s.value)},o=l${s.object}.get(k);if(o===undefined)l${s.object}.set(k,v);else if(!V.equal(o,v))conflict(${where(s)},"object insert conflict");}`;
                    break;
                case "ObjectMergeStmt":
                    out += `l${s.target}=merge(l${s.a},l${s.b});`;
                    break;
                case "SetAddStmt":
                    out += `l${s.set}.add(${operand(s.value)});`;
                    break;
                case "ResetLocalStmt":
                    out += `l${s.target}=undefined;`;
                    break;
                case "ResultSetAddStmt":
                    out += `rs.push(l${s.value});`;
                    break;
                case "ReturnLocalStmt":
                    out += ret === null ? `return;` : `return l${s.source};`;
                    break;
                case "ScanStmt": {
                    const join = joins.get(s);
                    if (join !== undefined) out += joinCode(join, frames, ret);
                    else out += scanLoop(s, frames, scanOverData, (inner) => block(s.block, inner, ret));
                    break;
                }
                default:
                    throw new UnsupportedPlan(`uses the statement ${type}`);
            }
        }
        return out;
    }

    /** A scan's loop around its body (`body` given the frames inside the loop): the scan's own code, and a join's levels. */
    const scanLoop = (s: Record<string, any>, frames: Frame[], overData: boolean, body: (inner: Frame[]) => string): string => {
        const outer = `s${labels++}`;
        const loop = `s${labels++}`;
        const i = `i${labels}`;
        return (
            `${outer}:{const src=l${s.source},ks=${keysOf(s, overData)},n=ks===null?src.length:ks.length;` +
            `${loop}:for(let ${i}=0;${i}<n;${i}++){if(--T.n<0)T.spent();` +
            // An input object's key holding undefined is not there (JSON has none): skipped here, not listed apart.
            `if(ks===null){l${s.key}=${i};l${s.value}=src[${i}];}else{l${s.key}=ks[${i}];l${s.value}=V.member(src,ks[${i}]);if(l${s.value}===undefined)continue ${loop};}` +
            body([...frames, { label: outer, loop: false }, { label: loop, loop: true }]) +
            `}}`
        );
    };

    /**
     * The code of a built-in call that cannot raise, written in place (no call through the
     * built-in's table, no try): the result set to its value, or undefined where the built-in
     * fails (as `failed` makes a built-in's error). Undefined for the others.
     */
    const inlineBuiltin = (name: string, args: readonly Operand[], target: string): string | undefined => {
        const [a, b, c] = args.map(operand);
        switch (name) {
            case "object.get": {
                // object.get(o, "key", default) on a plain object: its field read in place (the key is no name Object.prototype has).
                if (args[1]?.type !== "string_index" || PROTOTYPE_KEYS.has(strings[args[1].value as number])) return undefined;
                return `if(${plainObject(a)}){${target}=${a}${member(strings[args[1].value as number])};if(${target}===undefined)${target}=${c};}else ${target}=V.objectGetOr(${a},${b},${c});`;
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
    };

    /** The keys a scan visits: the one its body requires (pinned), in any order, or in OPA's. */
    const keysOf = (s: Record<string, any>, overData: boolean): string => {
        const pin = pinned.get(s);
        if (pin !== undefined) return `V.scanKeysPinned(src,${operand(pin)})`;
        return `V.${anyOrder.has(s) ? "scanKeysAnyOrder" : "scanKeys"}(src${overData ? ",true" : ""})`;
    };

    /**
     * A join (./join.ts) in place of its nest of scans: its index, built by a function of the data
     * document's parts it reads (kept while they are the same objects), looked up by the value
     * compared; for each element found, its locals set, then the probe statements and the rest.
     */
    let joinFunctions = "";
    let joinSites = 0;
    const joinCode = (join: JoinSite, frames: Frame[], ret: string | null): string => {
        const site = joinSites++;
        const free = join.free.map((l) => `l${l}`);
        const args = ["l0", "l1", ...free].join(",");
        const dataParts = join.parts.map((level) => level.filter((p) => p.data).map((p) => p.st));
        const own = [...locals(dataParts.map((stmts) => ({ stmts })), new Set(join.tuple))].filter((l) => l > 1 && !join.free.includes(l));
        const level = (k: number, outerFrames: Frame[]): string =>
            scanLoop(join.scans[k].stmt, outerFrames, true, (inner) => block({ stmts: dataParts[k] }, inner, null) + (k + 1 < join.scans.length ? level(k + 1, inner) : `ix.add(l${join.probe},[${join.tuple.map((l) => `l${l}`).join(",")}]);`));
        joinFunctions += `function j${site}(${args}){${own.length > 0 ? `let ${own.map((l) => `l${l}`).join(",")};` : ""}const ix=new V.JoinIndex();${level(0, [])}return ix;}\n`;
        const stale = ["c[0]!==l1", ...free.map((l, i) => `c[${i + 1}]!==${l}`)].join("||");
        const outer = `j${labels++}`;
        const loop = `j${labels++}`;
        const q = `q${labels}`;
        const probes = join.parts.flatMap((level) => level.filter((p) => !p.data && !p.hoist).map((p) => p.st));
        // Hoisted probes fail for every element alike: the nest is left.
        const hoisted = join.parts.flatMap((level) => level.filter((p) => p.hoist).map((p) => p.st));
        return (
            `${outer}:{${block({ stmts: hoisted }, [...frames, { label: outer, loop: false }], ret)}let c=J[${site}];if(c===undefined||${stale}){c=[l1,${free.map((l) => `${l},`).join("")}j${site}(${args})];J[${site}]=c;}` +
            `const ts=c[${free.length + 1}].get(${operand(join.key)});${loop}:for(let ${q}=0;${q}<ts.length;${q}++){if(--T.n<0)T.spent();const t=ts[${q}];${join.tuple.map((l, i) => `l${l}=t[${i}];`).join("")}` +
            block({ stmts: [...probes, ...join.rest] }, [...frames, { label: outer, loop: false }, { label: loop, loop: true }], ret) +
            `}}`
        );
    };

    /** Every local the blocks read or set, added to `into`. */
    const locals = (blocks: readonly Block[], into: Set<number>): Set<number> => {
        for (const st of allStatements(blocks)) {
            for (const l of ownReads(st)) into.add(l);
            for (const l of ownWrites(st)) into.add(l);
        }
        return into;
    };

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
    /** A function's or the plan's body: its locals declared, then each block labelled (`ret`: what a break past the top returns). */
    const bodyOf = (blocks: Block[], params: readonly number[], ret: number | null, prefix: string): string => {
        const ls = [...locals(blocks, new Set(ret === null ? [] : [ret]))].filter((l) => !params.includes(l));
        let body = ls.length > 0 ? `let ${ls.map((l) => `l${l}`).join(",")};` : "";
        mutated = changedCollections(blocks);
        dataLocals = new Set(params[1] === 1 ? [1] : []);
        for (const b of blocks) {
            const label = `${prefix}${labels++}`;
            body += `${label}:{${block(b, [{ label, loop: false }], ret === null ? null : `l${ret}`)}}`;
        }
        return body;
    };

    let code = "";
    funcs.forEach((f, idx) => {
        if (!reachable.has(idx)) return;
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
        const body = `${reordered.has(idx) ? `if(U)return u${idx}(${params.join(",")});` : ""}${bodyOf(f.blocks, f.params, f.return, "f")}return l${f.return};`;
        if (reordered.has(idx)) code += `function u${idx}(${params.join(",")}){${bodyOf(asWritten[idx].blocks, asWritten[idx].params, asWritten[idx].return, "u")}return l${asWritten[idx].return};}\n`;
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
    });
    const main = bodyOf(p.blocks, [0, 1], null, "p");
    if (reordered.size === 0) code += `return function evaluate(l0,l1){T.begin();if(l1!==D){D=l1;X=new Array(${funcs.length});}M.fill(undefined);const rs=[];${main}return V.resultSet(rs);};`;
    else {
        // Fused scans met a conflict: evaluated again as written, which says which conflict comes first.
        code += `function run(l0,l1){M.fill(undefined);const rs=[];${main}return V.resultSet(rs);}\n`;
        code += `return function evaluate(l0,l1){T.begin();if(l1!==D){D=l1;X=new Array(${funcs.length});}try{return run(l0,l1);}catch(e){if(!V.isConflict(e))throw e;U=true;try{return run(l0,l1);}finally{U=false;}}};`;
    }
    const builtins = builtinNames.length > 0 ? `const [${builtinNames.map((_, i) => `B${i}`).join(",")}]=need(${JSON.stringify(builtinNames)});` : "";
    // M: rules' values in this evaluation; X: input-free functions' values for the data document D; Y: values of functions of their arguments only.
    // J: each join's index, with the data document's parts it was built from.
    // U: evaluating again with the functions as written (after a conflict in fused scans).
    return `${PLAN_JS_FIRST_LINE}\n"use strict";${builtins}let M=new Array(${funcs.length}),X,D={},Y=new Array(${funcs.length}),J=[],U=false;\n${joinFunctions}${code}\n`;
}

const NONE = Symbol("undefined");

/** An evaluation that ran past its time budget (../budget.ts): stops it, and names the budget. */
export class PlanTimeout extends Error {
    constructor(readonly budgetMs: number) {
        super(`evaluation ran longer than its time budget of ${budgetMs} ms (OPS_TEMPLATE_TIME_BUDGET_MS)`);
        this.name = "PlanTimeout";
    }
}

/**
 * The time budget of an evaluation, as the compiled code keeps it: every turn of a loop counts
 * down `n`; the clock is read only each STEP turns (an evaluation of fewer turns never reads it),
 * from the first such reading on, so that the budget costs a decrement per turn.
 */
const STEP = 50_000;
const TIME = {
    n: STEP,
    start: 0,
    begin(): void {
        this.n = STEP;
        this.start = 0;
    },
    spent(): void {
        this.n = STEP;
        const now = performance.now();
        if (this.start === 0) this.start = now;
        else if (now - this.start > budget()) throw new PlanTimeout(budget());
    },
};
const budget = templateTimeBudgetMs;

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

/**
 * The value operations the compiled code calls, as plain properties: a module namespace may
 * hand out its exports through getters (as the CommonJS output of some TypeScript runners
 * does), which the compiled code would call on every operation.
 */
const RUNTIME = { ...values, isConflict: (e: unknown) => e instanceof PlanEvalError };

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

/** A built-in's error: undefined (Gatekeeper's non-strict built-in errors), but for an error that stops evaluation. */
function failed(err: unknown): undefined {
    if (err instanceof PlanEvalError) throw err;
    return undefined;
}

function conflict(where: string, what: string): never {
    throw new PlanEvalError(`${where}: ${what}`);
}

/** ObjectMergeStmt: the objects merged recursively (a's value wins where both are not objects); undefined unless both are objects. */
function merge(a: unknown, b: unknown): unknown {
    if (!values.isObject(a) || !values.isObject(b)) return undefined;
    const out = new values.RegoObject();
    for (const k of values.objectKeys(a)) out.set(k, values.objectGet(a, k));
    for (const k of values.objectKeys(b)) {
        const x = values.objectGet(a, k);
        const y = values.objectGet(b, k);
        if (x === undefined) out.set(k, y);
        else if (values.isObject(x) && values.isObject(y)) out.set(k, merge(x, y));
    }
    return out;
}

export { UnsupportedPlan };
