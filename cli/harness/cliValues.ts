/**
 * How the pulumi CLI reads one value of a stack file's `config:` map and what it hands the
 * program: the string `pulumi config get` prints and the Node SDK's allConfig() returns.
 *
 * The CLI (pulumi 3.259.0: sdk/go/common/workspace/loaders.go LoadProjectStackBytes) reads the
 * file with Go's gopkg.in/yaml.v3 into plain Go values, writes them back as YAML, reads that again
 * into config.Value (sdk/go/common/resource/config/object.go), and hands the program
 * Value.Value(): a string as written, a number or boolean as its JSON text, a list or map as JSON.
 * So a plain `0755` is octal (493), `1_000` is 1000, `True` is "true", `2.0` is "2", an empty value
 * is "" (with a warning), and `.inf` makes the whole stack unreadable. Checked against the CLI
 * itself by test/stackValues.integration.ts over test/fixtures/stack-values/.
 */
import * as YAML from "yaml";

/** A value as yaml.v3 decodes it into `any`. */
type GoValue =
    | { k: "null" }
    | { k: "bool"; v: boolean }
    | { k: "int"; v: bigint }
    | { k: "float"; v: number }
    | { k: "str"; v: string }
    | { k: "time"; v: string }
    | { k: "seq"; v: GoValue[] }
    | { k: "map"; v: Array<[string, GoValue]> };

/** What the CLI makes of one stack-file value. */
export type CliValue =
    | { ok: true; text: string; secure: false; object: boolean }
    | { ok: true; ciphertext: string; secure: true }
    | { ok: false; problem: string };

class Unreadable extends Error {}

const RESOLVE_MAP: Record<string, GoValue> = {};
for (const s of ["true", "True", "TRUE"]) RESOLVE_MAP[s] = { k: "bool", v: true };
for (const s of ["false", "False", "FALSE"]) RESOLVE_MAP[s] = { k: "bool", v: false };
for (const s of ["", "~", "null", "Null", "NULL"]) RESOLVE_MAP[s] = { k: "null" };
for (const s of [".nan", ".NaN", ".NAN"]) RESOLVE_MAP[s] = { k: "float", v: NaN };
for (const s of [".inf", ".Inf", ".INF", "+.inf", "+.Inf", "+.INF"]) RESOLVE_MAP[s] = { k: "float", v: Infinity };
for (const s of ["-.inf", "-.Inf", "-.INF"]) RESOLVE_MAP[s] = { k: "float", v: -Infinity };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;
const UINT64_MAX = 2n ** 64n - 1n;

/** Go's strconv.ParseInt(s, 0, 64) / ParseUint(s, 0, 64) on a string without underscores. */
function parseGoInt(s: string, signed: boolean): bigint | undefined {
    const m = /^([+-]?)(.*)$/.exec(s)!;
    if (m[1] && !signed) return undefined;
    const body = m[2];
    let digits: string;
    let radix: number;
    if (/^0[xX]/.test(body)) [digits, radix] = [body.slice(2), 16];
    else if (/^0[oO]/.test(body)) [digits, radix] = [body.slice(2), 8];
    else if (/^0[bB]/.test(body)) [digits, radix] = [body.slice(2), 2];
    else if (/^0./.test(body)) [digits, radix] = [body.slice(1), 8];
    else [digits, radix] = [body, 10];
    const valid = { 2: /^[01]+$/, 8: /^[0-7]+$/, 10: /^[0-9]+$/, 16: /^[0-9a-fA-F]+$/ }[radix as 2 | 8 | 10 | 16];
    if (!valid.test(digits)) return undefined;
    const prefix = { 2: "0b", 8: "0o", 10: "", 16: "0x" }[radix as 2 | 8 | 10 | 16];
    let n = BigInt(prefix + digits);
    if (m[1] === "-") n = -n;
    if (signed ? n < INT64_MIN || n > INT64_MAX : n > UINT64_MAX) return undefined;
    return n;
}

const YAML_STYLE_FLOAT = /^[-+]?(\.[0-9]+|[0-9]+(\.[0-9]*)?)([eE][-+]?[0-9]+)?$/;
/** yaml.v3's timestamp forms: only a date is read here; the others are refused (they would be handed as Go's time.String()). */
const DATE = /^(\d{4})-(\d{1,2})-(\d{1,2})$/;
const TIMESTAMP = /^\d{4}-\d{1,2}-\d{1,2}([Tt ]\d{1,2}:\d{1,2}:\d{1,2}(\.\d+)?(Z|[+-]\d{2}:\d{2})?)$/;

function goDate(text: string): string | undefined {
    const m = DATE.exec(text);
    if (!m) return undefined;
    const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
    const date = new Date(Date.UTC(y, mo - 1, d));
    if (date.getUTCFullYear() !== y || date.getUTCMonth() !== mo - 1 || date.getUTCDate() !== d) return undefined;
    const pad = (n: number) => String(n).padStart(2, "0");
    return `${m[1]}-${pad(mo)}-${pad(d)} 00:00:00 +0000 UTC`;
}

/** yaml.v3's resolve() of a plain (unquoted, untagged) scalar. */
export function resolvePlain(text: string): GoValue {
    const hit = RESOLVE_MAP[text];
    if (hit) return hit;
    if (text === "<<") throw new Unreadable("a merge key `<<` is not read here; write the values out");
    const c = text[0];
    if (c === ".") {
        if (/^\.[0-9]+([eE][-+]?[0-9]+)?$/.test(text) && Number.isFinite(Number(text))) return { k: "float", v: Number(text) };
        return { k: "str", v: text };
    }
    if (!/[-+0-9]/.test(c)) return { k: "str", v: text };
    if (/^\d{4}-/.test(text)) {
        const date = goDate(text);
        if (date) return { k: "time", v: date };
        if (TIMESTAMP.test(text)) throw new Unreadable(`${JSON.stringify(text)} is a YAML timestamp, which the pulumi CLI hands over in Go's time format; quote it if it is meant as text`);
    }
    const plain = text.replace(/_/g, "");
    const i = parseGoInt(plain, true) ?? parseGoInt(plain, false);
    if (i !== undefined) return { k: "int", v: i };
    if (YAML_STYLE_FLOAT.test(plain)) {
        const f = Number(plain);
        if (Number.isFinite(f)) return { k: "float", v: f };
    }
    return { k: "str", v: text };
}

/** Go's strconv.FormatFloat(f, 'g', -1, 64), as yaml.v3 writes a float: %e below 1e-4 and from 1e6 on. */
export function goFormatG(f: number): string {
    if (Number.isNaN(f)) return ".nan";
    if (!Number.isFinite(f)) return f > 0 ? ".inf" : "-.inf";
    if (f === 0) return Object.is(f, -0) ? "-0" : "0";
    const [mantissa, expText] = f.toExponential().split("e");
    const exp = Number(expText);
    if (exp < -4 || exp >= 6) return `${mantissa}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    return String(f);
}

/** The Go value after the CLI writes the first reading back as YAML and reads it again. */
function roundTrip(v: GoValue): GoValue {
    switch (v.k) {
        case "float":
            return resolvePlain(goFormatG(v.v));
        case "seq":
            return { k: "seq", v: v.v.map(roundTrip) };
        case "map":
            return { k: "map", v: v.v.map(([key, val]) => [key, roundTrip(val)]) };
        default:
            return v;
    }
}

/** Go's encoding/json text of a value (map keys sorted, <, >, & and U+2028/9 escaped). */
function goJson(v: GoValue): string {
    switch (v.k) {
        case "null":
            return "null";
        case "bool":
            return String(v.v);
        case "int":
            return v.v.toString();
        case "float":
            if (!Number.isFinite(v.v)) throw new Unreadable(`the pulumi CLI cannot read ${v.v} (json: unsupported value)`);
            return String(v.v);
        case "str":
        case "time":
            return JSON.stringify(v.v).replace(/</g, "\\u003c").replace(/>/g, "\\u003e").replace(/&/g, "\\u0026").replace(/\u2028/g, "\\u2028").replace(/\u2029/g, "\\u2029");
        case "seq":
            return `[${v.v.map(goJson).join(",")}]`;
        case "map":
            return `{${[...v.v].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)).map(([k, val]) => `${goJson({ k: "str", v: k })}:${goJson(val)}`).join(",")}}`;
    }
}

/** Go's fmt "%v" of a map key as decoded by yaml.v3. */
function goKey(v: GoValue): string {
    switch (v.k) {
        case "null":
            return "<nil>";
        case "bool":
            return String(v.v);
        case "int":
            return v.v.toString();
        case "float":
            return goFormatG(v.v).replace(/^\.inf$/, "+Inf").replace(/^-\.inf$/, "-Inf").replace(/^\.nan$/, "NaN");
        case "str":
        case "time":
            return v.v;
        default:
            throw new Unreadable("a list or map as a map key is not read here");
    }
}

/** The first reading: a YAML node as yaml.v3 decodes it into `any`. */
function fromNode(node: unknown): GoValue {
    if (node === null || node === undefined) return { k: "null" };
    if (YAML.isAlias(node)) throw new Unreadable("an alias (*name) is not read here; write the value out");
    if (YAML.isScalar(node)) {
        const tag = node.tag;
        const text = String(node.source ?? node.value ?? "");
        if (tag && tag !== "tag:yaml.org,2002:str" && tag !== "!") throw new Unreadable(`the explicit tag ${tag.replace("tag:yaml.org,2002:", "!!")} is not read here; write a plain or quoted value`);
        if (tag || node.type !== "PLAIN") return { k: "str", v: String(node.value) };
        return resolvePlain(text);
    }
    if (YAML.isSeq(node)) return { k: "seq", v: node.items.map(fromNode) };
    if (YAML.isMap(node)) {
        const seen = new Set<string>();
        const entries: Array<[string, GoValue]> = [];
        for (const item of node.items) {
            const key = goKey(fromNode(item.key));
            if (key === "<<") throw new Unreadable("a merge key `<<` is not read here; write the values out");
            if (seen.has(key)) throw new Unreadable(`the key ${JSON.stringify(key)} appears twice in one map`);
            seen.add(key);
            entries.push([key, fromNode(item.value)]);
        }
        return { k: "map", v: entries };
    }
    throw new Unreadable("an unknown YAML node");
}

const isSecureShape = (v: GoValue): boolean => v.k === "map" && v.v.length === 1 && v.v[0][0] === "secure" && v.v[0][1].k === "str";

function containsSecure(v: GoValue): boolean {
    if (isSecureShape(v)) return true;
    if (v.k === "seq") return v.v.some(containsSecure);
    if (v.k === "map") return v.v.some((entry) => containsSecure(entry[1]));
    return false;
}

/** A map with a `secure` key that the CLI would not take as an encrypted value (one key, a string). */
export function malformedSecure(v: GoValue): boolean {
    if (v.k === "seq") return v.v.some(malformedSecure);
    if (v.k !== "map") return false;
    if (v.v.some(([k]) => k === "secure") && !isSecureShape(v)) return true;
    return v.v.some(([, x]) => malformedSecure(x));
}

/**
 * The pulumi CLI's reading of one value node of `config:` (undefined: the key has no value).
 * secure: the value is `{secure: <ciphertext>}`; object: the text is JSON of a list or map.
 */
export function cliValue(node: unknown): CliValue {
    try {
        const first = fromNode(node);
        // A key without a value: the second reading leaves config.Value empty, the program gets "".
        if (first.k === "null") return { ok: true, text: "", secure: false, object: false };
        if (malformedSecure(first)) return { ok: false, problem: "has a `secure:` map that is not an encrypted value: expected exactly `secure: <ciphertext>` (a string), as `pulumi config set --secret` writes it" };
        if (isSecureShape(first)) return { ok: true, ciphertext: ((first as { v: Array<[string, { v: string }]> }).v[0][1]).v, secure: true };
        if (containsSecure(first)) return { ok: false, problem: "has an encrypted value inside a list or map, which the offline render cannot read; store the whole value with `pulumi config set --secret`" };
        const v = roundTrip(first);
        switch (v.k) {
            case "str":
            case "time":
                return { ok: true, text: v.v, secure: false, object: false };
            case "seq":
            case "map":
                return { ok: true, text: goJson(v), secure: false, object: true };
            default:
                return { ok: true, text: goJson(v), secure: false, object: false };
        }
    } catch (e) {
        if (e instanceof Unreadable) return { ok: false, problem: e.message };
        throw e;
    }
}

/** The `config:` values of a stack file's text, as the CLI reads them (undefined when `config:` is absent or not a map). */
export function cliConfigValues(text: string): Map<string, CliValue> | undefined {
    const doc = YAML.parseDocument(text, { schema: "failsafe", uniqueKeys: true });
    if (doc.errors.length > 0) throw new Error(doc.errors[0].message);
    const top = doc.contents;
    if (!YAML.isMap(top)) return undefined;
    const config = top.get("config", true);
    if (!YAML.isMap(config)) return undefined;
    const out = new Map<string, CliValue>();
    for (const item of config.items) out.set(String(YAML.isScalar(item.key) ? item.key.value : item.key), cliValue(item.value));
    return out;
}

/**
 * The type check of `pulumi preview` (pkg/workspace/config.go validateStackConfigValue with
 * ValidateConfigValue of sdk/go/common/workspace/project.go) for a key Pulumi.yaml declares.
 */
export function cliTypeAccepts(type: "string" | "integer" | "boolean" | "array", itemType: "string" | "integer" | undefined, value: { text: string; object: boolean }): boolean {
    const content: unknown = value.object ? JSON.parse(value.text) : value.text;
    return validate(type, itemType, content);
}

const goAtoi = (s: string) => /^[+-]?[0-9]+$/.test(s) && BigInt(s) >= INT64_MIN && BigInt(s) <= INT64_MAX;

function validate(type: string, itemType: string | undefined, content: unknown): boolean {
    if (type === "string") return typeof content === "string";
    if (type === "integer") return (typeof content === "number" && Number.isInteger(content)) || (typeof content === "string" && goAtoi(content));
    if (type === "boolean") return content === "true" || content === "false" || typeof content === "boolean";
    if (!Array.isArray(content) || !itemType) return false;
    return content.every((item) => validate(itemType, undefined, item));
}
