/**
 * Rego values as OPA's Wasm module dumps them (opa_value_dump: JSON plus set literals `{a, b}` /
 * `set()` and non-string object keys), and OPA's rendering of a term (ast.Term.String(), what
 * sprintf's %v prints for anything but a string or a number); the conversions to and from the
 * compiled plans' values (../plan/values.ts), whose order (ast.Compare) both use.
 */
import * as plan from "../plan/values";
import { goFloatText, goQuote } from "../rego/text";

// Taken once as plain values: some TypeScript runners give a module's exports through getters, one call each.
const { compare, computedInteger, isBigNumber, objectGet, objectKeys, RegoObject: PlanObject, RegoSet: PlanSet } = plan;

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

/** A set's members in OPA's order (ast.Compare, ../plan/values.ts). */
function sorted(s: Set<RegoValue>): RegoValue[] {
    return inOrder([...s], (v) => v);
}

/** An object's entries in the order of their keys. */
function sortedEntries(o: RegoObject): [RegoValue, RegoValue][] {
    return inOrder([...o.entries], (e) => e[0]);
}

function inOrder<T>(list: T[], key: (t: T) => RegoValue): T[] {
    if (list.length < 2) return list;
    const keyed = list.map((t) => ({ k: fromHost(key(t)), t }));
    keyed.sort((a, b) => compare(a.k, b.k));
    return keyed.map((e) => e.t);
}

/** OPA's ordering of values (ast.Compare): the compiled plans' (../plan/values.ts compare). */
export function compareRego(a: RegoValue, b: RegoValue): number {
    return compare(fromHost(a), fromHost(b));
}

/**
 * A value of the compiled plans (../plan/values.ts), or plain JSON of Gatekeeper's input with
 * JavaScript Sets (the TypeScript templates'), as the host holds it: a number as OPA's text of
 * it (a computed integer's digits; a number of the input as Go writes a float64), objects as
 * entries in OPA's order.
 */
export function toHost(v: unknown): RegoValue {
    if (v === null) return null;
    if (typeof v === "boolean" || typeof v === "string") return v;
    if (typeof v === "bigint") return new RegoNumber(v.toString());
    if (typeof v === "number") return new RegoNumber(isBigNumber(v) ? goFloatText(v) : String(v));
    if (Array.isArray(v)) return v.map(toHost);
    if (v instanceof PlanSet) return new Set(v.sortedValues().map(toHost));
    if (v instanceof Set) return new Set([...v].map(toHost));
    return new RegoObject(objectKeys(v).map((k) => [toHost(k), toHost(objectGet(v, k))]));
}

/** A host value as the compiled plans hold it (an integer of at least 1e6 as a bigint). */
export function fromHost(v: RegoValue): unknown {
    if (v === null || typeof v === "boolean" || typeof v === "string") return v;
    if (v instanceof RegoNumber) return /^-?\d+$/.test(v.text) ? computedInteger(v.text) : v.value;
    if (Array.isArray(v)) return v.map(fromHost);
    if (v instanceof Set) {
        const s = new PlanSet();
        for (const x of v) s.add(fromHost(x));
        return s;
    }
    const o = new PlanObject();
    for (const [k, x] of v.entries) o.set(fromHost(k), fromHost(x));
    return o;
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
