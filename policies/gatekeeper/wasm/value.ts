/**
 * The Wasm host's boundary: OPA's Wasm module dumps values as text (opa_value_dump: JSON plus
 * set literals `{a, b}` / `set()` and non-string object keys), read here into the values of
 * ../rego/values.ts, on which the built-ins run; a built-in's result is written back as the text
 * opa_value_parse reads, and a result set as JSON.
 */
import { termString } from "../rego/sprintf";
import * as values from "../rego/values";

// Taken once as plain values: some TypeScript runners give a module's exports through getters, one call each.
const { numberFromText, NumberText, numberText, objectGet, objectKeys, RegoObject, RegoSet } = values;

const NUMBER = /-?[0-9][0-9.eE+-]*/y;

/** Parses opa_value_dump's text. */
export function parseRegoValue(text: string): unknown {
    let i = 0;
    const ws = () => {
        for (let c = text.charCodeAt(i); c === 32 || c === 10 || c === 9 || c === 13; c = text.charCodeAt(++i));
    };
    const fail = (what: string): never => {
        throw new Error(`cannot read the Wasm module's value at ${i}: ${what} in ${text.slice(0, 200)}`);
    };
    const value = (): unknown => {
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
            const items: unknown[] = [];
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
                return new RegoObject();
            }
            const first = value();
            ws();
            if (text[i] === ":") {
                i++;
                const entries: [unknown, unknown][] = [[first, value()]];
                for (;;) {
                    ws();
                    if (text[i] === "}") {
                        i++;
                        return objectOf(entries);
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
            const members = new RegoSet();
            members.add(first);
            for (;;) {
                ws();
                if (text[i] === "}") {
                    i++;
                    return members;
                }
                if (text[i] !== ",") fail("expected , or }");
                i++;
                members.add(value());
            }
        }
        if (text.startsWith("set()", i)) {
            i += 5;
            return new RegoSet();
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
        return numberFromText(m[0], true);
    };
    const v = value();
    ws();
    if (i !== text.length) fail("trailing text");
    return v;
}

/** An object as RegoObject (its sorted keys kept for ordering), its string keys in the module's order. */
function objectOf(entries: [unknown, unknown][]): object {
    if (entries.every(([k]) => typeof k === "string")) return new RegoObject(entries.map(([k]) => k as string), entries.map(([, x]) => x));
    const o = new RegoObject();
    for (const [k, x] of entries) o.set(k, x);
    return o;
}

/** As JSON (sets as arrays in OPA's order, non-string keys as their term text), as opa_json_dump gives. */
export function toJSON(v: unknown): unknown {
    if (v === null || typeof v !== "object") return typeof v === "bigint" ? Number(v) : v;
    if (v instanceof NumberText) return Number(v.text);
    if (Array.isArray(v)) return v.map(toJSON);
    if (v instanceof RegoSet) return v.sortedValues().map(toJSON);
    const o = v as InstanceType<typeof RegoObject>;
    const out: Record<string, unknown> = {};
    for (const k of o.stringsOnly ? o.stringKeys() : objectKeys(o)) out[typeof k === "string" ? k : termString(k)] = toJSON(o.get(k));
    return out;
}

/** The text opa_value_parse reads: JSON with set literals (what the host hands back to a module). */
export function valueText(v: unknown): string {
    if (v === null) return "null";
    switch (typeof v) {
        case "boolean":
            return String(v);
        case "string":
            return JSON.stringify(v);
        case "number":
        case "bigint":
            return numberText(v);
    }
    if (v instanceof NumberText) return v.text;
    if (Array.isArray(v)) return `[${v.map(valueText).join(",")}]`;
    if (v instanceof RegoSet) return v.size === 0 ? "set()" : `{${v.values().map(valueText).join(",")}}`;
    return `{${objectKeys(v)
        .map((k) => `${valueText(k)}:${valueText(objectGet(v, k))}`)
        .join(",")}}`;
}
