/**
 * A host for a policy compiled by `opa build -t wasm`, written to OPA's documented Wasm ABI
 * (docs/docs/wasm.md of OPA 1.17.1: imports env.memory, opa_abort, opa_println, opa_builtin0-4;
 * exports builtins, entrypoints, opa_malloc, opa_json_parse, opa_value_parse, opa_json_dump,
 * opa_value_dump, opa_heap_ptr_get, opa_eval). The built-ins the module asks of its host are ours
 * (builtins.ts): a module that needs one we do not provide is refused when it loads, naming it.
 *
 * A built-in that fails returns undefined, as Gatekeeper's Rego engine runs with non-strict
 * built-in errors. An error that stops evaluation (opa_abort, e.g. a conflict) is thrown as
 * WasmEvalError with the module's text.
 */
import { HOST_BUILTINS, type HostBuiltin } from "./builtins";
import { parseRegoValue, toJSON, valueText, type RegoValue } from "./value";

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
    opa_eval(reserved: number, entrypoint: number, data: number, input: number, inputLen: number, heap: number, format: number): number;
}

const PAGE = 64 * 1024;
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
    private evalHeap = 0;
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
            instance = new WebAssembly.Instance(new WebAssembly.Module(bytes), { env });
        } catch (err) {
            throw new Error(`${source}: not a policy module OPA's Wasm ABI can load: ${(err as Error).message}`);
        }
        this.exports = instance.exports as unknown as Exports;
        if (typeof this.exports.opa_eval !== "function") throw new Error(`${source}: the module has no opa_eval export (Wasm ABI 1.2 or later is required)`);
        const builtinIds = this.dumpJSON(this.exports.builtins()) as Record<string, number>;
        this.neededBuiltins = Object.keys(builtinIds).sort();
        const missing = missingBuiltins(this.neededBuiltins, provided);
        if (missing.length > 0) {
            throw new Error(
                `${source}: the policy calls built-in function${missing.length > 1 ? "s" : ""} ${missing.join(", ")}, which the pack's Wasm host does not provide ` +
                    `(provided: ${[...provided.keys()].sort().join(", ")})`,
            );
        }
        for (const [name, id] of Object.entries(builtinIds)) this.builtinsById.set(id, { name, fn: provided.get(name)! });
        this.entrypoints = this.dumpJSON(this.exports.entrypoints()) as Record<string, number>;
        this.initialHeap = this.exports.opa_heap_ptr_get();
        this.setData({});
    }

    /** Loads the base document `data` (replacing the previous one); skipped when it is the same object. */
    setData(data: unknown): void {
        if (data === this.loadedData) return;
        this.exports.opa_heap_ptr_set(this.initialHeap);
        const addr = this.writeBytes(encoder.encode(JSON.stringify(data)));
        this.dataAddr = this.exports.opa_json_parse(addr.ptr, addr.len);
        if (this.dataAddr === 0) throw new Error(`${this.source}: the module could not parse the data document`);
        this.evalHeap = this.exports.opa_heap_ptr_get();
        this.loadedData = data;
    }

    /** Evaluates an entrypoint on `input` with the loaded data; returns the result set as JSON (sets as arrays in OPA's order). */
    evaluate(input: unknown, entrypoint = 0): { result: unknown }[] {
        return this.evaluateText(JSON.stringify(input), entrypoint);
    }

    /** Same as evaluate, from the input's JSON text. */
    evaluateText(inputJSON: string, entrypoint = 0): { result: unknown }[] {
        // UTF-8 takes at most 3 bytes per UTF-16 unit.
        this.ensureMemory(this.evalHeap + inputJSON.length * 3);
        const { written } = encoder.encodeInto(inputJSON, new Uint8Array(this.memory.buffer, this.evalHeap));
        const resultAddr = this.exports.opa_eval(0, entrypoint, this.dataAddr, this.evalHeap, written, this.evalHeap + written, 1);
        return toJSON(parseRegoValue(this.readString(resultAddr))) as { result: unknown }[];
    }

    private callBuiltin(id: number, argAddrs: number[]): number {
        const builtin = this.builtinsById.get(id);
        if (!builtin) throw new WasmEvalError(`${this.source}: the module called built-in #${id}, which it did not declare`);
        const args = argAddrs.map((a) => parseRegoValue(this.readString(this.exports.opa_value_dump(a))));
        let result: RegoValue | undefined;
        try {
            result = builtin.fn(args);
        } catch {
            // Gatekeeper's Rego runs with non-strict built-in errors: a failing call is undefined.
            return 0;
        }
        if (result === undefined) return 0;
        const addr = this.writeBytes(encoder.encode(valueText(result)));
        return this.exports.opa_value_parse(addr.ptr, addr.len);
    }

    private ensureMemory(end: number): void {
        const have = this.memory.buffer.byteLength;
        if (end > have) this.memory.grow(Math.ceil((end - have) / PAGE));
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
