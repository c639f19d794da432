/**
 * More of OPA's deterministic built-ins that Gatekeeper's Rego driver allows, on the values of
 * ./values.ts, each with OPA 1.17.1's topdown meaning (v1/topdown/time.go, parse_bytes.go,
 * parse_units.go, regex.go), for the compiled plans (../plan/builtins.ts) and the Wasm host
 * (../wasm/builtins.ts). Times and sizes are exact (bigints). A function throws on an operand it
 * does not accept (undefined in Gatekeeper's non-strict built-in errors).
 */
import { RE2JS } from "re2js";
import * as values from "./values";

// Taken once as plain functions: some TypeScript runners give a module's exports through getters, one call each.
const { computedInteger, isBigNumber, NumberText } = values;

type Fn = (...args: unknown[]) => unknown;

function str(v: unknown, pos: number): string {
    if (typeof v !== "string") throw new TypeError(`operand ${pos} must be string`);
    return v;
}

/** builtins.IntOperand: a number whose OPA text Go reads as an int (digits: not a float64 of the input of at least 1e6, written 1e+06). */
function int(v: unknown, pos: number): number {
    if (typeof v === "bigint") return Number(v);
    if (typeof v === "number" && Number.isInteger(v) && !isBigNumber(v)) return v;
    if (v instanceof NumberText && /^-?\d+$/.test(v.text)) return Number(v.text);
    throw new TypeError(`operand ${pos} must be integer number`);
}

const INT64_MIN = -(1n << 63n);
const INT64_MAX = (1n << 63n) - 1n;

// ---- time.parse_rfc3339_ns: Go's time.Parse(time.RFC3339, s) (its RFC 3339 fast path), then UnixNano

const daysIn = (month: number, year: number) => (month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31);

/** Days from 1970-01-01 to a proleptic Gregorian date (Howard Hinnant's days_from_civil). */
function daysFromCivil(y: number, m: number, d: number): bigint {
    const yy = m <= 2 ? y - 1 : y;
    const era = Math.floor(yy / 400);
    const yoe = yy - era * 400;
    const doy = Math.floor((153 * (m + (m > 2 ? -3 : 9)) + 2) / 5) + d - 1;
    const doe = yoe * 365 + Math.floor(yoe / 4) - Math.floor(yoe / 100) + doy;
    return BigInt(era * 146097 + doe - 719468);
}

export function parseRFC3339Nanos(s: string): bigint {
    const bad = () => new RangeError(`parsing time ${JSON.stringify(s)} as "2006-01-02T15:04:05Z07:00": cannot parse`);
    const m = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(Z|[+-]\d{2}:\d{2})$/.exec(s);
    if (!m) throw bad();
    const [year, month, day, hour, min, sec] = m.slice(1, 7).map(Number);
    if (month < 1 || month > 12 || day < 1 || day > daysIn(month, year) || hour > 23 || min > 59 || sec > 59) throw bad();
    const nanos = BigInt(((m[7] ?? "") + "000000000").slice(0, 9));
    let offset = 0n;
    if (m[8] !== "Z") {
        const hh = Number(m[8].slice(1, 3));
        const mm = Number(m[8].slice(4, 6));
        if (hh > 23 || mm > 59) throw bad();
        offset = BigInt((hh * 60 + mm) * 60) * (m[8][0] === "-" ? -1n : 1n);
    }
    const seconds = daysFromCivil(year, month, day) * 86400n + BigInt(hour * 3600 + min * 60 + sec) - offset;
    const ns = seconds * 1_000_000_000n + nanos;
    if (ns < INT64_MIN || ns > INT64_MAX) throw new RangeError("time outside of valid range");
    return ns;
}

// ---- time.parse_duration_ns: Go's time.ParseDuration, with OPA's d, w and y

const UNIT_NS = new Map<string, bigint>([
    ["ns", 1n],
    ["us", 1_000n],
    ["\u00b5s", 1_000n],
    ["\u03bcs", 1_000n],
    ["ms", 1_000_000n],
    ["s", 1_000_000_000n],
    ["m", 60_000_000_000n],
    ["h", 3_600_000_000_000n],
]);

/** Go's time.ParseDuration (Go 1.26's algorithm: an integer part, a fraction as float64, per segment). */
export function parseGoDuration(orig: string): bigint {
    const invalid = () => new RangeError(`time: invalid duration ${JSON.stringify(orig)}`);
    let s = orig;
    let neg = false;
    if (s !== "" && (s[0] === "-" || s[0] === "+")) {
        neg = s[0] === "-";
        s = s.slice(1);
    }
    if (s === "0") return 0n;
    if (s === "") throw invalid();
    let d = 0n;
    const LIMIT = 1n << 63n;
    while (s !== "") {
        if (!(s[0] === "." || (s[0] >= "0" && s[0] <= "9"))) throw invalid();
        let i = 0;
        let v = 0n;
        while (i < s.length && s[i] >= "0" && s[i] <= "9") {
            v = v * 10n + BigInt(s.charCodeAt(i) - 48);
            if (v > LIMIT) throw invalid();
            i++;
        }
        const pre = i > 0;
        s = s.slice(i);
        let f = 0;
        let scale = 1;
        let post = false;
        if (s !== "" && s[0] === ".") {
            s = s.slice(1);
            let j = 0;
            let overflow = false;
            let fi = 0n;
            while (j < s.length && s[j] >= "0" && s[j] <= "9") {
                if (!overflow) {
                    if (fi > (LIMIT - 1n) / 10n) overflow = true;
                    else {
                        fi = fi * 10n + BigInt(s.charCodeAt(j) - 48);
                        scale *= 10;
                    }
                }
                j++;
            }
            f = Number(fi);
            post = j > 0;
            s = s.slice(j);
        }
        if (!pre && !post) throw invalid();
        let u = 0;
        while (u < s.length && !(s[u] === "." || (s[u] >= "0" && s[u] <= "9"))) u++;
        if (u === 0) throw new RangeError(`time: missing unit in duration ${JSON.stringify(orig)}`);
        const unitName = s.slice(0, u);
        s = s.slice(u);
        const unit = UNIT_NS.get(unitName);
        if (unit === undefined) throw new RangeError(`time: unknown unit ${JSON.stringify(unitName)} in duration ${JSON.stringify(orig)}`);
        if (v > LIMIT / unit) throw invalid();
        v *= unit;
        if (f > 0) {
            v += BigInt(Math.trunc(f * (Number(unit) / scale)));
            if (v > LIMIT) throw invalid();
        }
        d += v;
        if (d > LIMIT) throw invalid();
    }
    if (neg) return -d;
    if (d > LIMIT - 1n) throw invalid();
    return d;
}

const HOURS_PER = new Map([
    ["d", 24],
    ["w", 7 * 24],
    ["y", 365 * 24],
]);

/** OPA's parseExtendedDuration: segments in d, w or y rewritten to hours (strconv.FormatFloat 'f'), then Go's ParseDuration. */
export function parseExtendedDuration(s: string): bigint {
    if (s === "") throw new RangeError(`time: invalid duration ""`);
    if (!/[dwy]/.test(s)) return parseGoDuration(s);
    const m = /^([+-]?)((?:(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|\u00b5s|\u03bcs|ms|s|m|h|d|w|y))+)$/.exec(s);
    if (!m) throw new RangeError(`time: invalid duration ${JSON.stringify(s)}`);
    const rewritten =
        m[1] +
        [...m[2].matchAll(/(\d+(?:\.\d*)?|\.\d+)(ns|us|\u00b5s|\u03bcs|ms|s|m|h|d|w|y)/g)]
            .map(([, digits, unit]) => {
                const hours = HOURS_PER.get(unit);
                return hours === undefined ? digits + unit : `${formatFloatF(Number(digits) * hours)}h`;
            })
            .join("");
    try {
        return parseGoDuration(rewritten);
    } catch (err) {
        const msg = (err as Error).message;
        throw new RangeError(`${msg.slice(0, msg.lastIndexOf(" "))} ${JSON.stringify(s)}`);
    }
}

/** strconv.FormatFloat(x, 'f', -1, 64): the shortest decimal, never an exponent. */
function formatFloatF(x: number): string {
    const t = String(x);
    if (!/e/.test(t)) return t;
    const [mant, exp] = t.split("e");
    const e = Number(exp);
    const [int, frac = ""] = mant.replace("-", "").split(".");
    const digits = int + frac;
    const point = int.length + e;
    const body = point <= 0 ? `0.${"0".repeat(-point)}${digits}` : point >= digits.length ? digits + "0".repeat(point - digits.length) : `${digits.slice(0, point)}.${digits.slice(point)}`;
    return (x < 0 ? "-" : "") + body;
}

// ---- units.parse_bytes and units.parse

/** topdown's extractNumAndUnit: the number (digits, '.', an exponent of at most 6 digits) and the rest. */
function numAndUnit(s: string, name: string): [string, string] {
    let first = -1;
    for (let i = 0; i < s.length; i++) {
        const c = s[i];
        const isNum = (c >= "0" && c <= "9") || c === ".";
        if (!isNum && c !== "e" && c !== "E" && c !== "+" && c !== "-") {
            first = i;
            break;
        }
        if (c === "e" || c === "E") {
            const next = s[i + 1];
            if (i === s.length - 1 || (!(next >= "0" && next <= "9") && next !== "+" && next !== "-")) {
                first = i;
                break;
            }
            if (next === "+" || next === "-") i++;
            let end = i + 1;
            while (end < s.length && s[end] >= "0" && s[end] <= "9") end++;
            if (end - (i + 1) > 6) throw new RangeError(`${name}: exponent too large`);
        }
    }
    if (first === -1) return [s, ""];
    if (first === 0) return ["", s];
    return [s.slice(0, first), s.slice(first)];
}

/** A decimal text (big.Float/big.Rat SetString's decimal form) as an exact fraction [num, den]; undefined when it is not one. */
function decimal(text: string): [bigint, bigint] | undefined {
    const m = /^([+-]?)(\d*)(?:\.(\d*))?(?:[eE]([+-]?\d+))?$/.exec(text);
    if (!m || (m[2] === "" && (m[3] ?? "") === "")) return undefined;
    const digits = BigInt((m[2] || "0") + (m[3] ?? ""));
    const exp = Number(m[4] ?? 0) - (m[3] ?? "").length;
    const sign = m[1] === "-" ? -1n : 1n;
    return exp >= 0 ? [sign * digits * 10n ** BigInt(exp), 1n] : [sign * digits, 10n ** BigInt(-exp)];
}

const BYTE_UNITS = new Map<string, bigint>([
    ["", 1n],
    ["kb", 1000n], ["k", 1000n], ["kib", 1n << 10n], ["ki", 1n << 10n],
    ["mb", 1000n ** 2n], ["m", 1000n ** 2n], ["mib", 1n << 20n], ["mi", 1n << 20n],
    ["gb", 1000n ** 3n], ["g", 1000n ** 3n], ["gib", 1n << 30n], ["gi", 1n << 30n],
    ["tb", 1000n ** 4n], ["t", 1000n ** 4n], ["tib", 1n << 40n], ["ti", 1n << 40n],
    ["pb", 1000n ** 5n], ["p", 1000n ** 5n], ["pib", 1n << 50n], ["pi", 1n << 50n],
    ["eb", 1000n ** 6n], ["e", 1000n ** 6n], ["eib", 1n << 60n], ["ei", 1n << 60n],
]);

export function unitsParseBytes(raw: string): bigint {
    const s = raw.toLowerCase().replace(/"/g, "");
    if (s.includes(" ")) throw new RangeError("units.parse_bytes: spaces not allowed in resource strings");
    const [num, unit] = numAndUnit(s, "units.parse_bytes");
    if (num === "") throw new RangeError("units.parse_bytes: no byte amount provided");
    const factor = BYTE_UNITS.get(unit);
    if (factor === undefined) throw new RangeError(`units.parse_bytes: byte unit ${unit} not recognized`);
    const n = decimal(num);
    if (n === undefined) throw new RangeError("units.parse_bytes: could not parse byte amount to a number");
    // big.Float's Int truncates toward zero.
    return (n[0] * factor) / n[1];
}

const SI_UNITS = new Map<string, [bigint, bigint]>([
    ["", [1n, 1n]],
    ["m", [1n, 1000n]],
    ["k", [1000n, 1n]], ["K", [1000n, 1n]], ["ki", [1n << 10n, 1n]], ["Ki", [1n << 10n, 1n]],
    ["M", [1000n ** 2n, 1n]], ["mi", [1n << 20n, 1n]], ["Mi", [1n << 20n, 1n]],
    ["g", [1000n ** 3n, 1n]], ["G", [1000n ** 3n, 1n]], ["gi", [1n << 30n, 1n]], ["Gi", [1n << 30n, 1n]],
    ["t", [1000n ** 4n, 1n]], ["T", [1000n ** 4n, 1n]], ["ti", [1n << 40n, 1n]], ["Ti", [1n << 40n, 1n]],
    ["p", [1000n ** 5n, 1n]], ["P", [1000n ** 5n, 1n]], ["pi", [1n << 50n, 1n]], ["Pi", [1n << 50n, 1n]],
    ["e", [1000n ** 6n, 1n]], ["E", [1000n ** 6n, 1n]], ["ei", [1n << 60n, 1n]], ["Ei", [1n << 60n, 1n]],
]);

/** units.parse: the value as big.Rat, written as its integer or FloatString(10). */
export function unitsParse(raw: string): string {
    const s = raw.replace(/"/g, "");
    if (s.includes(" ")) throw new RangeError("units.parse: spaces not allowed in resource strings");
    let [num, unit] = numAndUnit(s, "units.parse");
    if (num === "") throw new RangeError("units.parse: no amount provided");
    if (unit.length > 1) unit = unit[0] + unit.slice(1).toLowerCase();
    const factor = SI_UNITS.get(unit);
    if (factor === undefined) throw new RangeError(`units.parse: unit ${unit} not recognized`);
    const n = decimal(num);
    if (n === undefined) throw new RangeError("units.parse: could not parse amount to a number");
    const p = n[0] * factor[0];
    const q = n[1] * factor[1];
    if (p % q === 0n) return (p / q).toString();
    // big.Rat.FloatString(10): rounded half away from zero to 10 decimals.
    const neg = p < 0n;
    const a = neg ? -p : p;
    const scaled = (a * 10n ** 10n * 2n + q) / (2n * q);
    const intPart = scaled / 10n ** 10n;
    const frac = (scaled % 10n ** 10n).toString().padStart(10, "0");
    return `${neg ? "-" : ""}${intPart}.${frac}`;
}

// ---- regex.find_n

const compiled = new Map<string, RE2JS>();
function re2(pattern: string): RE2JS {
    let re = compiled.get(pattern);
    if (re === undefined) {
        re = RE2JS.compile(pattern);
        if (compiled.size > 1000) compiled.clear();
        compiled.set(pattern, re);
    }
    return re;
}

/** Go's Regexp.FindAllStringIndex(s, n): successive non-overlapping matches, an empty match not right after the previous one. */
export function findAllIndex(pattern: string, s: string, n: number): [number, number][] {
    if (n === 0) return [];
    const m = re2(pattern).matcher(s);
    const out: [number, number][] = [];
    let prevEnd = -1;
    let from = 0;
    while ((n < 0 || out.length < n) && from <= s.length && m.find(from)) {
        const start = m.start();
        const end = m.end();
        if (end === start && start === prevEnd) {
            // An empty match right after the previous match is skipped (Go's allMatches).
            from = start + (s.codePointAt(start)! > 0xffff ? 2 : 1);
            continue;
        }
        out.push([start, end]);
        prevEnd = end;
        from = end === start ? end + (end < s.length && s.codePointAt(end)! > 0xffff ? 2 : 1) : end;
    }
    return out;
}

/** Go's Regexp.FindAllString(s, n). */
export function findAllString(pattern: string, s: string, n: number): string[] {
    return findAllIndex(pattern, s, n).map(([a, b]) => s.slice(a, b));
}

/** Go's Regexp.Split(s, -1). */
export function regexSplit(pattern: string, s: string): string[] {
    if (pattern.length > 0 && s.length === 0) return [""];
    const out: string[] = [];
    let beg = 0;
    let end = 0;
    for (const [a, b] of findAllIndex(pattern, s, -1)) {
        end = a;
        if (b !== 0) out.push(s.slice(beg, end));
        beg = b;
    }
    if (end !== s.length) out.push(s.slice(beg));
    return out;
}

const integer = (n: bigint) => computedInteger(n.toString());

export const TOPDOWN_BUILTINS: ReadonlyMap<string, Fn> = new Map<string, Fn>([
    ["time.parse_rfc3339_ns", (s) => integer(parseRFC3339Nanos(str(s, 1)))],
    ["time.parse_duration_ns", (s) => integer(parseExtendedDuration(str(s, 1)))],
    ["units.parse_bytes", (s) => integer(unitsParseBytes(str(s, 1)))],
    // Its decimal (FloatString(10)) as a float64; the Wasm host keeps the text (../wasm/builtins.ts).
    ["units.parse", (s) => values.numberFromText(unitsParse(str(s, 1)))],
    ["regex.find_n", (p, s, n) => findAllString(str(p, 1), str(s, 2), int(n, 3))],
]);
