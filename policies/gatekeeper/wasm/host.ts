/**
 * A host for a policy compiled by `opa build -t wasm`, written to OPA's documented Wasm ABI
 * (docs/docs/wasm.md of OPA 1.17.1: imports env.memory, opa_abort, opa_println, opa_builtin0-4;
 * exports builtins, entrypoints, opa_malloc, opa_free, opa_json_parse, opa_value_parse, opa_json_dump,
 * opa_value_dump, opa_heap_ptr_get/set, opa_eval_ctx_new/set_input/set_data/set_entrypoint/get_result
 * and eval). The built-ins the module asks of its host are ours
 * (builtins.ts): a module that needs one we do not provide is refused when it loads, naming it.
 *
 * A built-in that fails returns undefined, as Gatekeeper's Rego engine runs with non-strict
 * built-in errors. An error that stops evaluation (opa_abort, e.g. a conflict) is thrown as
 * WasmEvalError with the module's text.
 */
import { createHash } from "node:crypto";
import vm from "node:vm";
import { templateTimeBudgetMs } from "../budget";
import { goFloatText } from "../rego/text";
import { HOST_BUILTINS, type HostBuiltin } from "./builtins";
import { parseRegoValue, toJSON, valueText } from "./value";

/** An evaluation that ran past its time budget (templateTimeBudgetMs), stopped by V8. */
export class WasmTimeout extends Error {
    constructor(readonly budgetMs: number) {
        super(`evaluation ran longer than its time budget of ${budgetMs} ms (OPS_TEMPLATE_TIME_BUDGET_MS)`);
        this.name = "WasmTimeout";
    }
}

/**
 * Runs a module's evaluation under the time budget: V8 stops Wasm code past a script's timeout
 * (a watchdog per call, about 80 microseconds: the Wasm path is the fallback).
 */
const EVAL_SLOT = Symbol.for("ops.wasmEval");
const EVAL_SCRIPT = new vm.Script(`globalThis[Symbol.for("ops.wasmEval")]()`, { filename: "wasm-eval" });
function evalWithin(run: () => number): number {
    const g = globalThis as unknown as Record<symbol, () => number>;
    g[EVAL_SLOT] = run;
    const budget = templateTimeBudgetMs();
    try {
        return EVAL_SCRIPT.runInThisContext({ timeout: budget }) as number;
    } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ERR_SCRIPT_EXECUTION_TIMEOUT") throw new WasmTimeout(budget);
        throw err;
    } finally {
        delete g[EVAL_SLOT];
    }
}

export class WasmEvalError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "WasmEvalError";
    }
}

/** The built-ins a module needs (its builtins() export) that the host does not provide. */
export function missingBuiltins(needed: readonly string[], provided: ReadonlyMap<string, HostBuiltin> = HOST_BUILTINS): string[] {
    return needed.filter((name) => !provided.has(name)).sort();
}

/** The error of a module that needs built-ins the host does not provide. */
export function missingBuiltinsMessage(source: string, missing: readonly string[], provided: ReadonlyMap<string, HostBuiltin> = HOST_BUILTINS): string {
    return (
        `${source}: the policy calls built-in function${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which the pack's Wasm host does not provide ` +
        `(provided: ${[...provided.keys()].sort().join(", ")})`
    );
}

interface Exports {
    builtins(): number;
    entrypoints(): number;
    opa_malloc(size: number): number;
    opa_json_parse(addr: number, len: number): number;
    opa_value_parse(addr: number, len: number): number;
    opa_json_dump(addr: number): number;
    opa_value_dump(addr: number): number;
    opa_heap_ptr_get(): number;
    opa_heap_ptr_set(addr: number): void;
    opa_free(addr: number): void;
    opa_eval_ctx_new(): number;
    opa_eval_ctx_set_input(ctx: number, input: number): void;
    opa_eval_ctx_set_data(ctx: number, data: number): void;
    opa_eval_ctx_set_entrypoint(ctx: number, entrypoint: number): void;
    opa_eval_ctx_get_result(ctx: number): number;
    eval(ctx: number): number;
}

/** Compiled modules by their bytes' digest: a module is compiled once per process. */
const compiledModules = new Map<string, WebAssembly.Module>();

/** A document's JSON as UTF-8, made once per object for every module that loads it. */
const encodedDocuments = new WeakMap<object, Uint8Array>();

function encodedJSON(doc: unknown): Uint8Array {
    if (typeof doc !== "object" || doc === null) return encoder.encode(goNumbersJSON(JSON.stringify(doc)));
    let bytes = encodedDocuments.get(doc);
    if (!bytes) encodedDocuments.set(doc, (bytes = encoder.encode(goNumbersJSON(JSON.stringify(doc)))));
    return bytes;
}

const BIG_INTEGER_OR_STRING = /"(?:[^"\\]|\\.)*"|-?\d{7,}(?![\d.eE])/g;

/**
 * A JSON text of Gatekeeper's input with its numbers as Gatekeeper hands them to Rego: Go
 * float64s, which OPA writes as Go does, so an integer of at least 1e6 is `1e+06` (sprintf then
 * prints it so, as under Gatekeeper); the rest are the same either way.
 */
export function goNumbersJSON(text: string): string {
    if (!/\d{7}/.test(text)) return text;
    return text.replace(BIG_INTEGER_OR_STRING, (m) => (m[0] === '"' ? m : goFloatText(Number(m))));
}

function compiledModule(bytes: Uint8Array<ArrayBuffer>): WebAssembly.Module {
    const key = createHash("sha256").update(bytes).digest("hex");
    let module = compiledModules.get(key);
    if (!module) compiledModules.set(key, (module = new WebAssembly.Module(bytes)));
    return module;
}

/** opa_value_dump of a result set whose one result is the empty set. */
const EMPTY_RESULT = '{{"result": set()}}';

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class WasmPolicy {
    private readonly memory: WebAssembly.Memory;
    private readonly exports: Exports;
    /** Built-in functions by the id the module gave them. */
    private readonly builtinsById = new Map<number, { name: string; fn: HostBuiltin }>();
    readonly entrypoints: Record<string, number>;
    /** The built-ins the module calls on its host, by name. */
    readonly neededBuiltins: string[];
    private readonly initialHeap: number;
    private dataAddr = 0;
    /**
     * The heap pointer just after the data document: every evaluation starts from here, with empty
     * free lists. OPA's malloc keeps its free lists ordered by address and searches them linearly,
     * so a heap kept across evaluations made opa_malloc and opa_free the module's main cost
     * (and a reset to the start of the heap had to parse data.inventory again: quadratic).
     * A reset also drops the module's cache of compiled regular expressions (malloc.c init_free
     * clears builtin_cache), as opa_eval does on every call: measured cheaper than the free lists.
     */
    private dataMark = 0;
    private dataBytes: Uint8Array = encoder.encode("{}");
    private loadedData: unknown = undefined;

    /**
     * Instantiates a module (synchronously: the pack runs inside a synchronous policy callback).
     * `source` names the module in errors.
     */
    constructor(bytes: Uint8Array<ArrayBuffer>, readonly source: string, provided: ReadonlyMap<string, HostBuiltin> = HOST_BUILTINS) {
        this.memory = new WebAssembly.Memory({ initial: 5 });
        const call = (id: number, args: number[]) => this.callBuiltin(id, args);
        const env = {
            memory: this.memory,
            opa_abort: (addr: number) => {
                throw new WasmEvalError(this.readString(addr));
            },
            opa_println: (addr: number) => {
                process.stderr.write(`${this.source}: ${this.readString(addr)}\n`);
            },
            opa_builtin0: (id: number) => call(id, []),
            opa_builtin1: (id: number, _ctx: number, a: number) => call(id, [a]),
            opa_builtin2: (id: number, _ctx: number, a: number, b: number) => call(id, [a, b]),
            opa_builtin3: (id: number, _ctx: number, a: number, b: number, c: number) => call(id, [a, b, c]),
            opa_builtin4: (id: number, _ctx: number, a: number, b: number, c: number, d: number) => call(id, [a, b, c, d]),
        };
        let instance: WebAssembly.Instance;
        try {
            instance = new WebAssembly.Instance(compiledModule(bytes), { env });
        } catch (err) {
            throw new Error(`${source}: not a policy module OPA's Wasm ABI can load: ${(err as Error).message}`);
        }
        this.exports = instance.exports as unknown as Exports;
        for (const name of ["eval", "opa_eval_ctx_new", "opa_eval_ctx_set_input", "opa_eval_ctx_set_data", "opa_eval_ctx_get_result", "opa_value_parse", "opa_value_dump"] as const) {
            if (typeof this.exports[name] !== "function") throw new Error(`${source}: the module has no ${name} export (OPA's Wasm ABI 1.2 or later is required)`);
        }
        const builtinIds = this.dumpJSON(this.exports.builtins()) as Record<string, number>;
        this.neededBuiltins = Object.keys(builtinIds).sort();
        const missing = missingBuiltins(this.neededBuiltins, provided);
        if (missing.length > 0) throw new Error(missingBuiltinsMessage(source, missing, provided));
        for (const [name, id] of Object.entries(builtinIds)) this.builtinsById.set(id, { name, fn: provided.get(name)! });
        this.entrypoints = this.dumpJSON(this.exports.entrypoints()) as Record<string, number>;
        this.initialHeap = this.exports.opa_heap_ptr_get();
        this.setData({});
    }

    /** The size of the module's memory (it only grows). */
    get memoryBytes(): number {
        return this.memory.buffer.byteLength;
    }

    /** Loads the base document `data` (replacing the previous one); skipped when it is the same object. */
    setData(data: unknown): void {
        if (data === this.loadedData) return;
        this.dataBytes = encodedJSON(data);
        this.loadedData = data;
        this.exports.opa_heap_ptr_set(this.initialHeap);
        this.parseData();
    }

    private parseData(): void {
        const addr = this.writeBytes(this.dataBytes);
        this.dataAddr = this.exports.opa_json_parse(addr.ptr, addr.len);
        if (this.dataAddr === 0) throw new Error(`${this.source}: the module could not parse the data document`);
        this.exports.opa_free(addr.ptr);
        this.dataMark = this.exports.opa_heap_ptr_get();
    }

    /** Empties the heap but for the data document (and the module's caches with it). */
    private resetHeap(): void {
        this.exports.opa_heap_ptr_set(this.dataMark);
    }

    /** Evaluates an entrypoint on `input` with the loaded data; returns the result set as JSON (sets as arrays in OPA's order). */
    evaluate(input: unknown, entrypoint = 0): { result: unknown }[] {
        return this.evaluateText(JSON.stringify(input), entrypoint);
    }

    /** Same as evaluate, from the input's JSON text. */
    evaluateText(inputJSON: string, entrypoint = 0): { result: unknown }[] {
        return this.evaluateJSON([encoder.encode(inputJSON)], entrypoint);
    }

    /** Same as evaluate, from the input's JSON as UTF-8 pieces written one after the other (the caller keeps the pieces it reuses). */
    evaluateJSON(pieces: readonly Uint8Array[], entrypoint = 0): { result: unknown }[] {
        const x = this.exports;
        // Every evaluation starts afresh (also after one an error stopped half-way).
        this.resetHeap();
        const len = pieces.reduce((n, p) => n + p.length, 0);
        const ptr = x.opa_malloc(len);
        const mem = new Uint8Array(this.memory.buffer, ptr, len);
        let at = 0;
        for (const p of pieces) {
            mem.set(p, at);
            at += p.length;
        }
        const input = x.opa_value_parse(ptr, len);
        if (input === 0) throw new Error(`${this.source}: the module could not parse the input document`);
        x.opa_free(ptr);
        const ctx = x.opa_eval_ctx_new();
        x.opa_eval_ctx_set_input(ctx, input);
        x.opa_eval_ctx_set_data(ctx, this.dataAddr);
        x.opa_eval_ctx_set_entrypoint(ctx, entrypoint);
        if (evalWithin(() => x.eval(ctx)) !== 0) throw new WasmEvalError("eval failed");
        const dumped = x.opa_value_dump(x.opa_eval_ctx_get_result(ctx));
        const text = this.readString(dumped);
        x.opa_free(dumped);
        // Most evaluations find nothing: that result needs no parsing.
        if (text === EMPTY_RESULT) return [{ result: [] }];
        return toJSON(parseRegoValue(text)) as { result: unknown }[];
    }

    private callBuiltin(id: number, argAddrs: number[]): number {
        const builtin = this.builtinsById.get(id);
        if (!builtin) throw new WasmEvalError(`${this.source}: the module called built-in #${id}, which it did not declare`);
        const args = argAddrs.map((a) => parseRegoValue(this.readString(this.exports.opa_value_dump(a))));
        let result: unknown;
        try {
            result = builtin.fn(...args);
        } catch {
            // Gatekeeper's Rego runs with non-strict built-in errors: a failing call is undefined.
            return 0;
        }
        if (result === undefined) return 0;
        const addr = this.writeBytes(encoder.encode(valueText(result)));
        return this.exports.opa_value_parse(addr.ptr, addr.len);
    }

    private writeBytes(bytes: Uint8Array): { ptr: number; len: number } {
        const ptr = this.exports.opa_malloc(bytes.length);
        new Uint8Array(this.memory.buffer, ptr, bytes.length).set(bytes);
        return { ptr, len: bytes.length };
    }

    private readString(addr: number): string {
        const mem = new Uint8Array(this.memory.buffer);
        let end = addr;
        while (mem[end] !== 0) end++;
        return decoder.decode(mem.subarray(addr, end));
    }

    private dumpJSON(addr: number): unknown {
        return JSON.parse(this.readString(this.exports.opa_json_dump(addr)));
    }
}
