/**
 * OPA's plan IR (`opa build -t plan`, v1/ir of OPA 1.17.1) compiled to JavaScript: the text of
 * one function per plan (planToJavaScript; npm run gatekeeper:wasm writes it beside the plan),
 * which the pack turns into the evaluator of the policy on the input and data as they are
 * (planEvaluator, ../rego/values.ts): the same IR `opa build -t wasm` compiles, and the same control
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
import type { Plan } from "./ir";
import { PLAN_JS_FIRST_LINE, planToJavaScript } from "./toJavaScript";
import * as values from "../rego/values";

export type { Plan } from "./ir";
export { missingPlanBuiltins, PLAN_JS_FIRST_LINE, planToJavaScript, UnsupportedPlan } from "./toJavaScript";

/** An error that stops evaluation (a conflict), with the Wasm module's text. */
export class PlanEvalError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "PlanEvalError";
    }
}

/** The plan's entrypoint as a function of input and data, returning its result set (in OPA's order). */
export type PlanEvaluator = (input: unknown, data: unknown) => unknown[];

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
 * The value operations the compiled code calls, as plain properties: a module namespace may
 * hand out its exports through getters (as the CommonJS output of some TypeScript runners
 * does), which the compiled code would call on every operation.
 */
const RUNTIME = { ...values, isConflict: (e: unknown) => e instanceof PlanEvalError };

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
