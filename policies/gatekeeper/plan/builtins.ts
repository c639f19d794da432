/**
 * Rego's built-in functions for policies compiled from OPA's plan IR (./compile.ts), on the
 * values of ../rego/values.ts, each with the meaning of OPA 1.17.1's topdown (v1/topdown/*.go). A
 * function throws on an operand it does not accept; the compiled policy turns that into
 * undefined, as Gatekeeper's Rego engine runs with non-strict built-in errors.
 *
 * sprintf, semver, strings.any_*_match, time, units and regex.find_n are the Rego runtime's,
 * shared with the Wasm host (../rego/builtins.ts).
 */
import { createHash } from "node:crypto";
import { RE2JS } from "re2js";
import { regexSplit } from "../rego/topdownBuiltins";
import { SHARED_BUILTINS } from "../rego/builtins";
import * as numbers from "./numbers";
import * as values from "../rego/values";
import { RegoObject, RegoSet } from "../rego/values";

// Taken once as plain functions: some TypeScript runners give a module's exports through getters, one call each.
const { compare, computedInteger, computedNumber, dot, equal, isBigNumber, isObject, objectGet, objectKeys } = values;
const { opaArith, opaSum } = numbers;

export type PlanBuiltin = (...args: unknown[]) => unknown;

function str(v: unknown, pos: number): string {
    if (typeof v !== "string") throw new TypeError(`operand ${pos} must be string`);
    return v;
}

function num(v: unknown, pos: number): number {
    if (typeof v === "bigint") return Number(v);
    if (typeof v !== "number") throw new TypeError(`operand ${pos} must be number`);
    return v;
}

const isNumber = (v: unknown) => typeof v === "number" || typeof v === "bigint";
const isIntegral = (v: unknown) => typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v));

/**
 * topdown's plus, minus and mul: on integers exact (as its int fast path, and big.Float's 64-bit
 * mantissa for the rest, exact below 2^64), else its big.Float arithmetic (./numbers.ts); an
 * integral result of at least 1e6 is written as its digits (builtins.FloatToNumber's 'f').
 */
function arithmetic(a: unknown, b: unknown, op: "plus" | "minus" | "mul" | "div"): number | bigint {
    if (op !== "div" && (typeof a === "bigint" || typeof b === "bigint") && isIntegral(a) && isIntegral(b)) {
        const x = BigInt(a as number | bigint);
        const y = BigInt(b as number | bigint);
        const r = op === "plus" ? x + y : op === "minus" ? x - y : x * y;
        return r >= 1_000_000n || r <= -1_000_000n ? r : Number(r);
    }
    return computedNumber(opaArith(num(a, 1), num(b, 2), op));
}

function set(v: unknown, pos: number): RegoSet {
    if (!(v instanceof RegoSet)) throw new TypeError(`operand ${pos} must be set`);
    return v;
}

/** The members of an array or a set (a set's in OPA's order). */
function members(v: unknown, pos: number): unknown[] {
    if (Array.isArray(v)) return v;
    if (v instanceof RegoSet) return v.sortedValues();
    throw new TypeError(`operand ${pos} must be one of {array, set}`);
}

function setOf(values: Iterable<unknown>): RegoSet {
    const s = new RegoSet();
    for (const v of values) s.add(v);
    return s;
}

/** Code points, as Go's []rune(s). */
const runes = (s: string): string[] => Array.from(s);

/**
 * Go's strings.ToLower / strings.ToUpper: each code point by its simple case mapping
 * (unicode.ToLower / ToUpper), never by JavaScript's full mapping (ß to SS, İ to i̇) or its
 * final-sigma rule. A code point whose full mapping has more than one code point keeps its
 * simple mapping: the table holds those whose simple mapping is not themselves.
 */
function caseMap(s: string, upper: boolean): string {
    if (/^[\x00-\x7f]*$/.test(s)) return upper ? s.toUpperCase() : s.toLowerCase();
    let out = "";
    for (const c of s) {
        const m = upper ? c.toUpperCase() : c.toLowerCase();
        if (m.length === c.length || [...m].length === 1) out += m;
        else {
            const cp = c.codePointAt(0)!;
            out += String.fromCodePoint((upper ? simpleUpper(cp) : cp === 0x130 ? 0x69 : undefined) ?? cp);
        }
    }
    return out;
}

/** Simple uppercase mappings (UnicodeData.txt) of code points whose full uppercase is longer: Greek with ypogegrammeni. */
function simpleUpper(cp: number): number | undefined {
    if ((cp >= 0x1f80 && cp <= 0x1f87) || (cp >= 0x1f90 && cp <= 0x1f97) || (cp >= 0x1fa0 && cp <= 0x1fa7)) return cp + 8;
    if (cp === 0x1fb3 || cp === 0x1fc3 || cp === 0x1ff3) return cp + 9;
    return undefined;
}

/** Go's strings.Trim family's cutset test. */
function cutsetOf(cutset: string): Set<string> {
    return new Set(runes(cutset));
}

function trimLeft(s: string, cut: Set<string>): string {
    const r = runes(s);
    let i = 0;
    while (i < r.length && cut.has(r[i])) i++;
    return r.slice(i).join("");
}

function trimRight(s: string, cut: Set<string>): string {
    const r = runes(s);
    let j = r.length;
    while (j > 0 && cut.has(r[j - 1])) j--;
    return r.slice(0, j).join("");
}

/** Go's strings.Split (an empty separator splits into code points). */
function goSplit(s: string, sep: string): string[] {
    return sep === "" ? runes(s) : s.split(sep);
}

/**
 * topdown's replace, Go's strings.NewReplacer(old, new): an empty old inserts new at every byte
 * boundary, splitting a multi-byte UTF-8 sequence into bytes that are not UTF-8 (each shown, as
 * OPA's JSON output shows it, as U+FFFD).
 */
function goReplace(s: string, old: string, neu: string): string {
    if (old !== "") return s.split(old).join(neu);
    if (neu === "") return s;
    let out = neu;
    for (const c of s) {
        const cp = c.codePointAt(0)!;
        const bytes = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
        out += bytes === 1 ? c + neu : `\ufffd${neu}`.repeat(bytes);
    }
    return out;
}

/** Go's unicode.IsSpace, as strings.TrimSpace uses it. */
const SPACE = /^[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+|[\t\n\v\f\r \u0085\u00a0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+$/g;

const patterns = new Map<string, { re: RE2JS; results: Map<string, boolean> }>();

/**
 * Whether a pattern in Go's (RE2) syntax matches somewhere in s; the pattern is compiled once
 * and its results kept (templates match the same few patterns against the same strings over
 * and over; a matcher of the pure-JavaScript RE2 port costs microseconds).
 */
function regexMatch(pattern: string, s: string): boolean {
    let p = patterns.get(pattern);
    if (p === undefined) {
        p = { re: RE2JS.compile(pattern), results: new Map() };
        patterns.set(pattern, p);
    }
    let r = p.results.get(s);
    if (r === undefined) {
        r = p.re.matcher(s).find();
        if (p.results.size >= 10_000) p.results.clear();
        p.results.set(s, r);
    }
    return r;
}

/** builtins.IntOperand: a number that Go's strconv.ParseInt reads as an int64 (an integer of at most 2^63 in magnitude). */
function int(v: unknown, pos: number): number {
    // A number of the input of at least 1e6 is a Go float64, whose text (1e+06) Go's ParseInt refuses.
    if (typeof v === "number" && isBigNumber(v)) throw new TypeError(`operand ${pos} must be integer number but got floating-point number`);
    const n = num(v, pos);
    if (!Number.isInteger(n) || n < -9223372036854775808 || n >= 9223372036854775808) throw new TypeError(`operand ${pos} must be integer number but got floating-point number`);
    return n;
}

/** Go's strconv underscoreOK: underscores only between digits (or a base prefix and a digit). */
function underscoreOK(s: string): boolean {
    let saw = "^";
    let i = 0;
    if (s[0] === "-" || s[0] === "+") s = s.slice(1);
    let hex = false;
    if (s.length >= 2 && s[0] === "0" && "bBoOxX".includes(s[1])) {
        i = 2;
        saw = "0";
        hex = s[1] === "x" || s[1] === "X";
    }
    for (; i < s.length; i++) {
        const c = s[i];
        if ((c >= "0" && c <= "9") || (hex && /[a-fA-F]/.test(c))) saw = "0";
        else if (c === "_") {
            if (saw !== "0") return false;
            saw = "_";
        } else {
            if (saw === "_") return false;
            saw = "!";
        }
    }
    return saw !== "_";
}

/**
 * Go's strconv.ParseFloat(s, 64), as to_number calls it: decimal or hexadecimal (with a p
 * exponent) floating point, underscores between digits, no spaces; an overflow is an error.
 */
function parseGoFloat(s: string): number {
    const invalid = () => new TypeError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: invalid syntax`);
    let i = 0;
    let underscores = false;
    if (s[i] === "+" || s[i] === "-") i++;
    const hex = i + 2 < s.length && s[i] === "0" && (s[i + 1] === "x" || s[i + 1] === "X");
    if (hex) i += 2;
    const digit = hex ? /[0-9a-fA-F]/ : /[0-9]/;
    let mantissa = "";
    let fraction = 0;
    let sawDot = false;
    for (; i < s.length; i++) {
        const c = s[i];
        if (c === "_") underscores = true;
        else if (c === ".") {
            if (sawDot) break;
            sawDot = true;
        } else if (digit.test(c)) {
            mantissa += c;
            if (sawDot) fraction++;
        } else break;
    }
    if (mantissa === "") throw invalid();
    let exp = 0;
    if (i < s.length && s[i].toLowerCase() === (hex ? "p" : "e")) {
        i++;
        let sign = 1;
        if (s[i] === "+") i++;
        else if (s[i] === "-") {
            sign = -1;
            i++;
        }
        if (i >= s.length || !/[0-9]/.test(s[i])) throw invalid();
        let e = 0;
        for (; i < s.length && /[0-9_]/.test(s[i]); i++) {
            if (s[i] === "_") underscores = true;
            else if (e < 10000) e = e * 10 + Number(s[i]);
        }
        exp = sign * e;
    } else if (hex) throw invalid();
    if (underscores && !underscoreOK(s.slice(0, i))) throw invalid();
    if (i !== s.length) throw invalid();
    const negative = s[0] === "-";
    let value: number;
    if (hex) {
        value = Number(BigInt(`0x${mantissa}`));
        // Scaled in steps: 2 ** e alone overflows (or underflows) before the product does.
        for (let e = exp - 4 * fraction; e !== 0 && value !== 0 && Number.isFinite(value); ) {
            const step = Math.max(-1000, Math.min(1000, e));
            value *= 2 ** step;
            e -= step;
        }
    } else value = Number(s.replace(/_/g, "").replace(/^[+-]/, ""));
    if (!Number.isFinite(value)) throw new RangeError(`strconv.ParseFloat: parsing ${JSON.stringify(s)}: value out of range`);
    return negative ? -value : value;
}

function arith(a: unknown, b: unknown, op: (x: number, y: number) => number): number {
    return op(num(a, 1), num(b, 2));
}

/** object.get's path lookup (ast.Value Find over objects, arrays and sets). */
function findPath(v: unknown, path: readonly unknown[]): unknown {
    let cur = v;
    for (const k of path) {
        cur = dot(cur, k);
        if (cur === undefined) return undefined;
    }
    return cur;
}

function member(x: unknown, coll: unknown): boolean {
    if (Array.isArray(coll)) return coll.some((v) => equal(v, x));
    if (coll instanceof RegoSet) return coll.has(x);
    if (isObject(coll)) return objectKeys(coll).some((k) => equal(objectGet(coll, k), x));
    return false;
}

export const PLAN_BUILTINS: ReadonlyMap<string, PlanBuiltin> = new Map<string, PlanBuiltin>([
    // comparison (any types, ast.Compare); `=` (eq) is never a call: the planner unifies it in statements
    ["equal", (a, b) => equal(a, b)],
    ["neq", (a, b) => !equal(a, b)],
    ["gt", (a, b) => compare(a, b) > 0],
    ["gte", (a, b) => compare(a, b) >= 0],
    ["lt", (a, b) => compare(a, b) < 0],
    ["lte", (a, b) => compare(a, b) <= 0],
    // arithmetic; minus on sets is their difference, as topdown's
    ["plus", (a, b) => (num(a, 1), num(b, 2), arithmetic(a, b, "plus"))],
    [
        "minus",
        (a, b) => {
            if (a instanceof RegoSet && b instanceof RegoSet) return setOf(a.sortedValues().filter((v) => !b.has(v)));
            if (isNumber(a) && isNumber(b)) return arithmetic(a, b, "minus");
            throw new TypeError("operands must be numbers or sets");
        },
    ],
    ["mul", (a, b) => (num(a, 1), num(b, 2), arithmetic(a, b, "mul"))],
    [
        "div",
        (a, b) => {
            if (num(b, 2) === 0) throw new RangeError("divide by zero");
            return arithmetic(a, b, "div");
        },
    ],
    [
        "rem",
        (a, b) =>
            arith(a, b, (x, y) => {
                if (!Number.isInteger(x) || !Number.isInteger(y)) throw new TypeError("modulo on floating-point number");
                if (y === 0) throw new RangeError("modulo by zero");
                return x % y;
            }),
    ],
    ["abs", (a) => (typeof a === "bigint" ? (a < 0n ? -a : a) : computedNumber(Math.abs(num(a, 1))))],
    // membership (`in`)
    ["internal.member_2", (x, coll) => member(x, coll)],
    ["internal.member_3", (k, v, coll) => (Array.isArray(coll) || isObject(coll) ? dot(coll, k) !== undefined && equal(dot(coll, k), v) : false)],
    // aggregates
    [
        "count",
        (v) => {
            const n = values.count(v);
            if (n === undefined) throw new TypeError("operand 1 must be one of {array, object, set, string}");
            return n;
        },
    ],
    ["sum", (v) => computedNumber(opaSum(members(v, 1).map((x) => num(x, 1))))],
    // topdown's max and min, ties and all: the last of equal values; min of a set starts from null and
    // takes the next member while it holds null, so a set's null is its minimum only when alone.
    ["max", (v) => members(v, 1).reduce((m: unknown, x) => (m === undefined || compare(m, x) <= 0 ? x : m), undefined)],
    [
        "min",
        (v) => {
            const all = members(v, 1);
            if (all.length === 0) return undefined;
            if (v instanceof RegoSet) return all.reduce((m: unknown, x) => (m === null || compare(m, x) >= 0 ? x : m), null);
            return all.reduce((m: unknown, x) => (compare(m, x) >= 0 ? x : m), all[0]);
        },
    ],
    ["sort", (v) => [...members(v, 1)].sort(compare)],
    // sets
    ["and", (a, b) => setOf(set(a, 1).sortedValues().filter((x) => set(b, 2).has(x)))],
    ["or", (a, b) => setOf([...set(a, 1).sortedValues(), ...set(b, 2).sortedValues()])],
    ["union", (v) => setOf(set(v, 1).sortedValues().flatMap((s) => set(s, 1).sortedValues()))],
    [
        "intersection",
        (v) => {
            const sets = set(v, 1).sortedValues().map((s) => set(s, 1));
            if (sets.length === 0) return new RegoSet();
            return setOf(sets[0].sortedValues().filter((x) => sets.every((s) => s.has(x))));
        },
    ],
    // strings
    ["concat", (d, v) => members(v, 2).map((x) => str(x, 2)).join(str(d, 1))],
    ["contains", (s, x) => str(s, 1).includes(str(x, 2))],
    ["startswith", (s, x) => str(s, 1).startsWith(str(x, 2))],
    ["endswith", (s, x) => str(s, 1).endsWith(str(x, 2))],
    ["lower", (s) => caseMap(str(s, 1), false)],
    ["upper", (s) => caseMap(str(s, 1), true)],
    ["split", (s, sep) => goSplit(str(s, 1), str(sep, 2))],
    ["replace", (s, old, neu) => goReplace(str(s, 1), str(old, 2), str(neu, 3))],
    [
        "indexof",
        (s, x) => {
            const r = runes(str(s, 1));
            const n = runes(str(x, 2));
            if (n.length === 0) throw new RangeError("empty search character");
            for (let i = 0; i + n.length <= r.length; i++) if (n.every((c, j) => r[i + j] === c)) return i;
            return -1;
        },
    ],
    [
        "substring",
        (s, offset, len) => {
            const r = runes(str(s, 1));
            const start = int(offset, 2);
            const n = int(len, 3);
            if (start < 0) throw new RangeError("negative offset");
            if (start >= r.length) return "";
            return (n < 0 ? r.slice(start) : r.slice(start, start + n)).join("");
        },
    ],
    ["trim", (s, c) => trimRight(trimLeft(str(s, 1), cutsetOf(str(c, 2))), cutsetOf(str(c, 2)))],
    ["trim_left", (s, c) => trimLeft(str(s, 1), cutsetOf(str(c, 2)))],
    ["trim_right", (s, c) => trimRight(str(s, 1), cutsetOf(str(c, 2)))],
    ["trim_prefix", (s, p) => (str(s, 1).startsWith(str(p, 2)) ? (s as string).slice((p as string).length) : s)],
    ["trim_suffix", (s, p) => (str(s, 1).endsWith(str(p, 2)) && (p as string).length > 0 ? (s as string).slice(0, -(p as string).length) : s)],
    ["trim_space", (s) => str(s, 1).replace(SPACE, "")],
    ...SHARED_BUILTINS,
    // more of topdown's deterministic built-ins (issue 43)
    [
        "strings.count",
        (s, sub) => {
            const x = str(s, 1);
            const y = str(sub, 2);
            return y === "" ? runes(x).length + 1 : x.split(y).length - 1;
        },
    ],
    ["strings.reverse", (s) => runes(str(s, 1)).reverse().join("")],
    [
        "array.reverse",
        (a) => {
            if (!Array.isArray(a)) throw new TypeError("operand 1 must be array");
            return [...a].reverse();
        },
    ],
    [
        "array.flatten",
        (a) => {
            if (!Array.isArray(a)) throw new TypeError("operand 1 must be array");
            // One level, as topdown's.
            const out: unknown[] = [];
            for (const x of a) Array.isArray(x) ? out.push(...x) : out.push(x);
            return out;
        },
    ],
    [
        "object.union",
        (a, b) => {
            if (!isObject(a)) throw new TypeError("operand 1 must be object");
            if (!isObject(b)) throw new TypeError("operand 2 must be object");
            return unionObjects(a, b);
        },
    ],
    ["object.remove", (o, keys) => objectWithKeys(o, keys, false)],
    ["object.filter", (o, keys) => objectWithKeys(o, keys, true)],
    ["base64.encode", (s) => Buffer.from(str(s, 1), "utf8").toString("base64")],
    ["base64.decode", (s) => base64Decode(str(s, 1), false)],
    ["base64url.encode", (s) => Buffer.from(str(s, 1), "utf8").toString("base64").replace(/\+/g, "-").replace(/\//g, "_")],
    ["base64url.encode_no_pad", (s) => Buffer.from(str(s, 1), "utf8").toString("base64url")],
    ["hex.encode", (s) => Buffer.from(str(s, 1), "utf8").toString("hex")],
    ["crypto.sha256", (s) => createHash("sha256").update(str(s, 1), "utf8").digest("hex")],
    ["crypto.sha1", (s) => createHash("sha1").update(str(s, 1), "utf8").digest("hex")],
    ["crypto.md5", (s) => createHash("md5").update(str(s, 1), "utf8").digest("hex")],
    ["ceil", (a) => (typeof a === "bigint" ? a : computedNumber(Math.ceil(num(a, 1))))],
    ["floor", (a) => (typeof a === "bigint" ? a : computedNumber(Math.floor(num(a, 1))))],
    [
        "numbers.range",
        (a, b) => {
            const x = int(a, 1);
            const y = int(b, 2);
            if (Math.abs(y - x) > 10_000_000) throw new RangeError("numbers.range: the range is too large for a preview");
            const out: unknown[] = [];
            if (x <= y) for (let i = x; i <= y; i++) out.push(computedNumber(i));
            else for (let i = x; i >= y; i--) out.push(computedNumber(i));
            return out;
        },
    ],
    ["product", (v) => members(v, 1).reduce((p: number | bigint, x) => (num(x, 1), arithmetic(p, x, "mul")), 1)],
    ["regex.is_valid", (p) => (typeof p === "string" ? regexValid(p) : false)],
    ["regex.split", (p, s) => regexSplit(str(p, 1), str(s, 2))],
    // any and all (deprecated, still allowed): whether some (every) member is true
    [
        "any",
        (v) => {
            if (v instanceof RegoSet) return v.has(true);
            if (Array.isArray(v)) return v.some((x) => x === true);
            throw new TypeError("operand 1 must be one of {array, set}");
        },
    ],
    [
        "all",
        (v) => {
            if (v instanceof RegoSet) return v.size === 0 || (v.size === 1 && v.has(true));
            if (Array.isArray(v)) return v.every((x) => x === true);
            throw new TypeError("operand 1 must be one of {array, set}");
        },
    ],
    // regular expressions (Go's RE2 syntax)
    ["regex.match", (p, s) => regexMatch(str(p, 1), str(s, 2))],
    ["re_match", (p, s) => regexMatch(str(p, 1), str(s, 2))],
    // types
    [
        "to_number",
        (v) => {
            if (v === null) return 0;
            if (typeof v === "boolean") return v ? 1 : 0;
            if (isNumber(v)) return v;
            const s = str(v, 1);
            // OPA keeps the text: an integer's digits (of at least 1e6: a bigint), else the float it reads.
            if (/^[+-]?\d+$/.test(s)) return computedInteger(s);
            const lower = s.replace(/^[+-]+/, "").toLowerCase();
            if (lower === "inf" || lower === "infinity" || lower === "nan") throw new TypeError("operand 1 must be valid number string");
            return parseGoFloat(s);
        },
    ],
    ["is_array", (v) => Array.isArray(v)],
    ["is_boolean", (v) => typeof v === "boolean"],
    ["is_null", (v) => v === null],
    ["is_number", (v) => isNumber(v)],
    ["is_object", (v) => isObject(v)],
    ["is_set", (v) => v instanceof RegoSet],
    ["is_string", (v) => typeof v === "string"],
    [
        "type_name",
        (v) =>
            v === null
                ? "null"
                : typeof v === "boolean"
                  ? "boolean"
                  : isNumber(v)
                    ? "number"
                    : typeof v === "string"
                      ? "string"
                      : Array.isArray(v)
                        ? "array"
                        : v instanceof RegoSet
                          ? "set"
                          : "object",
    ],
    // objects and arrays
    [
        "object.get",
        (o, key, fallback) => {
            if (!isObject(o)) throw new TypeError("operand 1 must be object");
            if (!Array.isArray(key)) return values.objectGetOr(o, key, fallback);
            if (key.length === 0) return o;
            const v = findPath(o, key);
            return v === undefined ? fallback : v;
        },
    ],
    [
        "object.keys",
        (o) => {
            if (!isObject(o)) throw new TypeError("operand 1 must be object");
            return setOf(objectKeys(o));
        },
    ],
    [
        "array.concat",
        (a, b) => {
            if (!Array.isArray(a) || !Array.isArray(b)) throw new TypeError("operands must be arrays");
            return [...a, ...b];
        },
    ],
    [
        "array.slice",
        (a, i, j) => {
            if (!Array.isArray(a)) throw new TypeError("operand 1 must be array");
            const start = int(i, 2);
            const stop = int(j, 3);
            return a.slice(Math.max(0, start), Math.max(0, Math.min(stop, a.length)));
        },
    ],
]);

/** object.union: b's entries over a's, objects under the same key merged the same way (topdown's mergeWithOverwrite). */
function unionObjects(a: unknown, b: unknown): RegoObject {
    const out = new RegoObject();
    for (const k of objectKeys(a)) out.set(k, objectGet(a, k));
    for (const k of objectKeys(b)) {
        const x = objectGet(a, k);
        const y = objectGet(b, k);
        out.set(k, x !== undefined && isObject(x) && isObject(y) ? unionObjects(x, y) : y);
    }
    return out;
}

/** object.remove (keep false) and object.filter (keep true): the keys an array, a set or an object's keys. */
function objectWithKeys(o: unknown, keys: unknown, keep: boolean): RegoObject {
    if (!isObject(o)) throw new TypeError("operand 1 must be object");
    let list: unknown[];
    if (Array.isArray(keys)) list = keys;
    else if (keys instanceof RegoSet) list = keys.sortedValues();
    else if (isObject(keys)) list = objectKeys(keys);
    else throw new TypeError("operand 2 must be one of {object, string, array}");
    const chosen = new RegoSet();
    for (const k of list) chosen.add(k);
    const out = new RegoObject();
    for (const k of objectKeys(o)) if (chosen.has(k) === keep) out.set(k, objectGet(o, k));
    return out;
}

/** Go's base64.StdEncoding.DecodeString (padded, strict), the bytes read as a string. */
function base64Decode(s: string, url: boolean): string {
    const valid = url ? /^(?:[A-Za-z0-9_-]{4})*(?:[A-Za-z0-9_-]{2}==|[A-Za-z0-9_-]{3}=)?$/ : /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
    if (!valid.test(s.replace(/[\r\n]/g, ""))) throw new TypeError("illegal base64 data");
    return Buffer.from(s, "base64").toString("utf8");
}

function regexValid(p: string): boolean {
    try {
        RE2JS.compile(p);
        return true;
    } catch {
        return false;
    }
}
