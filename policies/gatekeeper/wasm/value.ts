/**
 * Rego values as OPA's Wasm module dumps them (opa_value_dump: JSON plus set literals `{a, b}` /
 * `set()` and non-string object keys), and OPA's rendering of a term (ast.Term.String(), what
 * sprintf's %v prints for anything but a string or a number).
 */

/** A Rego number, kept as its text: sprintf prints it as OPA holds it (json.Number). */
export class RegoNumber {
    constructor(readonly text: string) {}
    get value(): number {
        return Number(this.text);
    }
}

export class RegoObject {
    constructor(readonly entries: [RegoValue, RegoValue][]) {}
}

export type RegoValue = null | boolean | string | RegoNumber | RegoValue[] | Set<RegoValue> | RegoObject;

const NUMBER = /-?[0-9][0-9.eE+-]*/y;

/** Parses opa_value_dump's text. */
export function parseRegoValue(text: string): RegoValue {
    let i = 0;
    const ws = () => {
        for (let c = text.charCodeAt(i); c === 32 || c === 10 || c === 9 || c === 13; c = text.charCodeAt(++i));
    };
    const fail = (what: string): never => {
        throw new Error(`cannot read the Wasm module's value at ${i}: ${what} in ${text.slice(0, 200)}`);
    };
    const value = (): RegoValue => {
        ws();
        const c = text[i];
        if (c === '"') {
            const start = i++;
            let escaped = false;
            for (let k = text.charCodeAt(i); i < text.length && k !== 34; k = text.charCodeAt(i)) {
                if (k === 92) {
                    escaped = true;
                    i += 2;
                } else i++;
            }
            i++;
            return escaped ? (JSON.parse(text.slice(start, i)) as string) : text.slice(start + 1, i - 1);
        }
        if (c === "[") {
            i++;
            const items: RegoValue[] = [];
            ws();
            if (text[i] === "]") {
                i++;
                return items;
            }
            for (;;) {
                items.push(value());
                ws();
                if (text[i] === ",") i++;
                else if (text[i] === "]") {
                    i++;
                    return items;
                } else fail("expected , or ]");
            }
        }
        if (c === "{") {
            i++;
            ws();
            if (text[i] === "}") {
                i++;
                return new RegoObject([]);
            }
            const first = value();
            ws();
            if (text[i] === ":") {
                i++;
                const entries: [RegoValue, RegoValue][] = [[first, value()]];
                for (;;) {
                    ws();
                    if (text[i] === "}") {
                        i++;
                        return new RegoObject(entries);
                    }
                    if (text[i] !== ",") fail("expected , or }");
                    i++;
                    const k = value();
                    ws();
                    if (text[i] !== ":") fail("expected :");
                    i++;
                    entries.push([k, value()]);
                }
            }
            const members: RegoValue[] = [first];
            for (;;) {
                ws();
                if (text[i] === "}") {
                    i++;
                    return new Set(members);
                }
                if (text[i] !== ",") fail("expected , or }");
                i++;
                members.push(value());
            }
        }
        if (text.startsWith("set()", i)) {
            i += 5;
            return new Set();
        }
        if (text.startsWith("null", i)) {
            i += 4;
            return null;
        }
        if (text.startsWith("true", i)) {
            i += 4;
            return true;
        }
        if (text.startsWith("false", i)) {
            i += 5;
            return false;
        }
        NUMBER.lastIndex = i;
        const m = NUMBER.exec(text);
        if (!m) return fail("unexpected character");
        i += m[0].length;
        return new RegoNumber(m[0]);
    };
    const v = value();
    ws();
    if (i !== text.length) fail("trailing text");
    return v;
}

/** A plain JSON value as a RegoValue (what a host built-in receives or the host gives). */
export function fromJSON(v: unknown): RegoValue {
    if (v === null || v === undefined) return null;
    if (typeof v === "boolean" || typeof v === "string") return v;
    if (typeof v === "number") return new RegoNumber(String(v));
    if (Array.isArray(v)) return v.map(fromJSON);
    if (v instanceof Set) return new Set([...v].map(fromJSON));
    return new RegoObject(Object.entries(v as object).map(([k, x]) => [k, fromJSON(x)]));
}

/** As JSON (sets as arrays in OPA's order, non-string keys as their text), as opa_json_dump gives. */
export function toJSON(v: RegoValue): unknown {
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (v instanceof RegoNumber) return v.value;
    if (Array.isArray(v)) return v.map(toJSON);
    if (v instanceof Set) return sorted(v).map(toJSON);
    const out: Record<string, unknown> = {};
    for (const [k, x] of v.entries) out[typeof k === "string" ? k : termString(k)] = toJSON(x);
    return out;
}

const TYPE_ORDER = (v: RegoValue): number =>
    v === null ? 0 : typeof v === "boolean" ? 1 : v instanceof RegoNumber ? 2 : typeof v === "string" ? 3 : Array.isArray(v) ? 4 : v instanceof RegoObject ? 5 : 6;

function sorted(s: Set<RegoValue>): RegoValue[] {
    return [...s].sort(compareRego);
}

function sortedEntries(o: RegoObject): [RegoValue, RegoValue][] {
    return [...o.entries].sort((a, b) => compareRego(a[0], b[0]));
}

function compareNumbers(a: RegoNumber, b: RegoNumber): number {
    const x = a.value;
    const y = b.value;
    if (x === y && Number.isSafeInteger(x) === false && /^-?\d+$/.test(a.text) && /^-?\d+$/.test(b.text)) {
        const p = BigInt(a.text);
        const q = BigInt(b.text);
        return p < q ? -1 : p > q ? 1 : 0;
    }
    return x < y ? -1 : x > y ? 1 : 0;
}

function compareStrings(a: string, b: string): number {
    // Go compares strings byte-wise (UTF-8), which is code point order, not UTF-16 unit order.
    const x = [...a];
    const y = [...b];
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const d = x[i].codePointAt(0)! - y[i].codePointAt(0)!;
        if (d !== 0) return d < 0 ? -1 : 1;
    }
    return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
}

/** OPA's ordering of values (ast.Compare). */
export function compareRego(a: RegoValue, b: RegoValue): number {
    const ta = TYPE_ORDER(a);
    const tb = TYPE_ORDER(b);
    if (ta !== tb) return ta < tb ? -1 : 1;
    if (a === null) return 0;
    if (typeof a === "boolean") return a === b ? 0 : a ? 1 : -1;
    if (a instanceof RegoNumber) return compareNumbers(a, b as RegoNumber);
    if (typeof a === "string") return compareStrings(a, b as string);
    const seq = (x: RegoValue[], y: RegoValue[]) => {
        for (let i = 0; i < Math.min(x.length, y.length); i++) {
            const c = compareRego(x[i], y[i]);
            if (c !== 0) return c;
        }
        return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
    };
    if (Array.isArray(a)) return seq(a, b as RegoValue[]);
    if (a instanceof Set) return seq(sorted(a), sorted(b as Set<RegoValue>));
    const x = sortedEntries(a as RegoObject);
    const y = sortedEntries(b as RegoObject);
    for (let i = 0; i < Math.min(x.length, y.length); i++) {
        const c = compareRego(x[i][0], y[i][0]) || compareRego(x[i][1], y[i][1]);
        if (c !== 0) return c;
    }
    return x.length < y.length ? -1 : x.length > y.length ? 1 : 0;
}

/** Go's strconv.Quote (ast.String.String()). */
export function goQuote(s: string): string {
    let out = '"';
    for (const ch of s) {
        const cp = ch.codePointAt(0)!;
        if (ch === '"' || ch === "\\") out += "\\" + ch;
        else if (cp === 7) out += "\\a";
        else if (cp === 8) out += "\\b";
        else if (cp === 12) out += "\\f";
        else if (cp === 10) out += "\\n";
        else if (cp === 13) out += "\\r";
        else if (cp === 9) out += "\\t";
        else if (cp === 11) out += "\\v";
        else if (cp < 0x20 || cp === 0x7f) out += "\\x" + cp.toString(16).padStart(2, "0");
        else if (!isPrintable(ch)) out += cp > 0xffff ? "\\U" + cp.toString(16).padStart(8, "0") : "\\u" + cp.toString(16).padStart(4, "0");
        else out += ch;
    }
    return out + '"';
}

function isPrintable(ch: string): boolean {
    return !/[\p{Cc}\p{Cf}\p{Co}\p{Cn}\p{Cs}\p{Zl}\p{Zp}]|[\p{Zs}]/u.test(ch) || ch === " ";
}

/** OPA's ast term rendering: strings quoted, ", " separators, object keys and set members sorted. */
export function termString(v: RegoValue): string {
    if (v === null) return "null";
    if (typeof v === "boolean") return String(v);
    if (typeof v === "string") return goQuote(v);
    if (v instanceof RegoNumber) return v.text;
    if (Array.isArray(v)) return `[${v.map(termString).join(", ")}]`;
    if (v instanceof Set) return v.size === 0 ? "set()" : `{${sorted(v).map(termString).join(", ")}}`;
    return `{${sortedEntries(v)
        .map(([k, x]) => `${termString(k)}: ${termString(x)}`)
        .join(", ")}}`;
}

/** The text opa_value_parse reads: JSON with set literals (what the host hands back to a module). */
export function valueText(v: RegoValue): string {
    if (v === null) return "null";
    if (typeof v === "boolean") return String(v);
    if (typeof v === "string") return JSON.stringify(v);
    if (v instanceof RegoNumber) return v.text;
    if (Array.isArray(v)) return `[${v.map(valueText).join(",")}]`;
    if (v instanceof Set) return v.size === 0 ? "set()" : `{${[...v].map(valueText).join(",")}}`;
    return `{${v.entries.map(([k, x]) => `${valueText(k)}:${valueText(x)}`).join(",")}}`;
}
