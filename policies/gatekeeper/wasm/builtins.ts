/**
 * The built-in functions the pack's Wasm host provides to policies compiled by `opa build -t wasm`
 * (those OPA's Wasm library leaves to its host), each with OPA 1.17.1's topdown meaning. A
 * function throws on an operand of the wrong type; the host turns that into undefined, as
 * Gatekeeper's non-strict built-in errors do.
 */
import { regoSprintf } from "./sprintf";
import type { RegoValue } from "./value";

export type HostBuiltin = (args: RegoValue[]) => RegoValue | undefined;

function str(v: RegoValue, pos: number): string {
    if (typeof v !== "string") throw new TypeError(`operand ${pos} must be string`);
    return v;
}

/** topdown's StringSliceOperand over a string, an array or a set of strings. */
function strings(v: RegoValue, pos: number): string[] {
    if (typeof v === "string") return [v];
    if (Array.isArray(v) || v instanceof Set) return [...v].map((x) => str(x, pos));
    throw new TypeError(`operand ${pos} must be one of {string, set, array}`);
}

export const HOST_BUILTINS: ReadonlyMap<string, HostBuiltin> = new Map<string, HostBuiltin>([
    [
        "sprintf",
        ([format, args]) => {
            if (!Array.isArray(args)) throw new TypeError("operand 2 must be array");
            return regoSprintf(str(format, 1), args);
        },
    ],
    [
        "strings.any_prefix_match",
        ([a, b]) => {
            const xs = strings(a, 1);
            const ps = strings(b, 2);
            return xs.some((x) => ps.some((p) => x.startsWith(p)));
        },
    ],
    [
        "strings.any_suffix_match",
        ([a, b]) => {
            const xs = strings(a, 1);
            const ss = strings(b, 2);
            return xs.some((x) => ss.some((s) => x.endsWith(s)));
        },
    ],
]);
