/**
 * The built-ins the compiled plans (../plan/builtins.ts) and the Wasm host (../wasm/builtins.ts)
 * share, on the values of ./values.ts, each with OPA 1.17.1's topdown meaning: sprintf (Go's fmt,
 * ./sprintf.ts), semver, strings.any_*_match, and time, units and regex.find_n
 * (./topdownBuiltins.ts). A function throws on an operand of the wrong type; the caller turns that
 * into undefined, as Gatekeeper's non-strict built-in errors do.
 */
import { regoSprintf } from "./sprintf";
import { TOPDOWN_BUILTINS } from "./topdownBuiltins";
import { RegoSet } from "./values";

export type Builtin = (...args: unknown[]) => unknown;

function str(v: unknown, pos: number): string {
    if (typeof v !== "string") throw new TypeError(`operand ${pos} must be string`);
    return v;
}

/** topdown's StringSliceOperand over a string, an array or a set of strings. */
function stringsOf(v: unknown, pos: number): string[] {
    if (typeof v === "string") return [v];
    if (Array.isArray(v) || v instanceof RegoSet) return (Array.isArray(v) ? v : v.values()).map((x) => str(x, pos));
    throw new TypeError(`operand ${pos} must be one of {string, set, array}`);
}

const INT64_MAX = (1n << 63n) - 1n;
const META_IDENTIFIER = /^[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*$/;

/** Go's strconv.ParseInt(s, 10, 64): an optional sign, decimal digits, within int64. */
function parseInt64(s: string): bigint {
    if (!/^[+-]?[0-9]+$/.test(s)) throw new TypeError(`strconv.ParseInt: parsing ${JSON.stringify(s)}: invalid syntax`);
    const n = BigInt(s);
    if (n > INT64_MAX || n < -INT64_MAX - 1n) throw new TypeError(`strconv.ParseInt: parsing ${JSON.stringify(s)}: value out of range`);
    return n;
}

interface SemVer {
    major: bigint;
    minor: bigint;
    patch: bigint;
    preRelease: string;
}

function cut(s: string, sep: string): [string, string] {
    const i = s.indexOf(sep);
    return i < 0 ? [s, ""] : [s.slice(0, i), s.slice(i + 1)];
}

/** OPA's internal/semver Parse (v1.17.1): an optional leading v, MAJOR.MINOR.PATCH, -pre-release, +metadata. */
function parseSemVer(text: string): SemVer {
    const [rest, metadata] = cut(text.startsWith("v") ? text.slice(1) : text, "+");
    if (metadata !== "" && !META_IDENTIFIER.test(metadata)) throw new TypeError(`invalid metadata identifier: ${metadata}`);
    const [version, preRelease] = cut(rest, "-");
    if (preRelease !== "" && !META_IDENTIFIER.test(preRelease)) throw new TypeError(`invalid pre-release identifier: ${preRelease}`);
    const parts = version.split(".");
    if (parts.length !== 3) throw new TypeError(`${version} should contain major, minor, and patch versions`);
    return { major: parseInt64(parts[0]), minor: parseInt64(parts[1]), patch: parseInt64(parts[2]), preRelease };
}

const sign = (a: bigint | string, b: bigint | string) => (a > b ? 1 : a < b ? -1 : 0);

/** Go's strconv.Atoi of an all-digit identifier, which saturates at int64's maximum. */
const atoi = (s: string) => {
    const n = BigInt(s);
    return n > INT64_MAX ? INT64_MAX : n;
};

/** OPA's Version.Compare (pre-release precedence as semver 2.0.0; metadata ignored). */
function compareSemVer(v: SemVer, o: SemVer): number {
    const c = sign(v.major, o.major) || sign(v.minor, o.minor) || sign(v.patch, o.patch);
    if (c !== 0) return c;
    if (v.preRelease === o.preRelease) return 0;
    if (v.preRelease === "") return 1;
    if (o.preRelease === "") return -1;
    let [a, afterA] = cut(v.preRelease, ".");
    let [b, afterB] = cut(o.preRelease, ".");
    for (;;) {
        // OPA loops forever here (numeric identifiers equal as numbers but not as text, such as
        // 01 and 1, with nothing after them): the host gives up, the call is undefined.
        if (a === "" && b === "") throw new RangeError(`semver.compare(${JSON.stringify(v.preRelease)}, ${JSON.stringify(o.preRelease)}) does not terminate in OPA`);
        if (a === "" && b !== "") return -1;
        if (a !== "" && b === "") return 1;
        const aInt = /^[0-9]+$/.test(a);
        const bInt = /^[0-9]+$/.test(b);
        if (aInt && !bInt) return -1;
        if (!aInt && bInt) return 1;
        const d = aInt ? sign(atoi(a), atoi(b)) : sign(a, b);
        if (d !== 0) return d;
        if (afterA !== "" && afterB === "") return 1;
        if (afterA === "" && afterB !== "") return -1;
        [a, afterA] = cut(afterA, ".");
        [b, afterB] = cut(afterB, ".");
    }
}

/** semver.is_valid: whether a value is a string OPA's semver reads (any other value is not). */
export function semverIsValid(v: unknown): boolean {
    if (typeof v !== "string") return false;
    try {
        parseSemVer(v);
        return true;
    } catch {
        return false;
    }
}

/** semver.compare of two strings (-1, 0 or 1); throws on another operand or a version OPA refuses. */
export function semverCompare(a: unknown, b: unknown): number {
    if (typeof a !== "string") throw new TypeError("operand 1 must be string");
    if (typeof b !== "string") throw new TypeError("operand 2 must be string");
    return compareSemVer(parseSemVer(a), parseSemVer(b));
}

/** strings.any_prefix_match / any_suffix_match on their operands read as lists of strings. */
function anyMatch(xs: readonly string[], ys: readonly string[], suffix: boolean): boolean {
    return xs.some((x) => ys.some((y) => (suffix ? x.endsWith(y) : x.startsWith(y))));
}

/** sprintf(format, args) (./sprintf.ts). */
function sprintf(format: unknown, args: unknown): string {
    if (!Array.isArray(args)) throw new TypeError("operand 2 must be array");
    return regoSprintf(str(format, 1), args);
}

export const SHARED_BUILTINS: ReadonlyMap<string, Builtin> = new Map<string, Builtin>([
    ["sprintf", sprintf],
    ["semver.is_valid", semverIsValid],
    ["semver.compare", semverCompare],
    ["strings.any_prefix_match", (a, b) => anyMatch(stringsOf(a, 1), stringsOf(b, 2), false)],
    ["strings.any_suffix_match", (a, b) => anyMatch(stringsOf(a, 1), stringsOf(b, 2), true)],
    ...TOPDOWN_BUILTINS,
]);
