/**
 * Rego's sprintf as OPA's topdown/strings.go builds it, on the values of ./values.ts (the compiled
 * plans' and the Wasm host's): each argument becomes a Go value (a number whose OPA text is an
 * integer an int, a larger integer a *big.Int, any other number a float64, a string a string,
 * anything else its term text), then Go's fmt.Sprintf formats them, with Go's error texts
 * (`%!d(string=x)`, `%!v(MISSING)`, `%!(EXTRA string=x)`, `%!(NOVERB)`).
 */
import { goQuote } from "./text";
import * as values from "./values";

// Taken once as plain functions: some TypeScript runners give a module's exports through getters, one call each.
const { isBigNumber, NumberText, numberText, objectGet, objectKeys, RegoSet } = values;

type GoArg = { type: "int" | "*big.Int"; v: bigint } | { type: "float64"; v: number } | { type: "string"; v: string };

const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const integer = (n: bigint): GoArg => ({ type: n >= INT64_MIN && n <= INT64_MAX ? "int" : "*big.Int", v: n });

function goArg(v: unknown): GoArg {
    if (typeof v === "string") return { type: "string", v };
    if (typeof v === "bigint") return integer(v);
    // A float64 of the input of at least 1e6 is written 1e+06: no integer to Go.
    if (typeof v === "number") return Number.isInteger(v) && !isBigNumber(v) ? integer(BigInt(v)) : { type: "float64", v };
    if (v instanceof NumberText) return /^-?\d+$/.test(v.text) ? integer(BigInt(v.text)) : { type: "float64", v: Number(v.text) };
    return { type: "string", v: termString(v) };
}

/** OPA's ast term rendering (%v of a composite): strings quoted, ", " separators, object keys and set members sorted. */
export function termString(v: unknown): string {
    if (v === null) return "null";
    switch (typeof v) {
        case "boolean":
            return String(v);
        case "string":
            return goQuote(v);
        case "number":
        case "bigint":
            return numberText(v);
    }
    if (v instanceof NumberText) return v.text;
    if (Array.isArray(v)) return `[${v.map(termString).join(", ")}]`;
    if (v instanceof RegoSet) return v.size === 0 ? "set()" : `{${v.sortedValues().map(termString).join(", ")}}`;
    return `{${objectKeys(v)
        .map((k) => `${termString(k)}: ${termString(objectGet(v, k))}`)
        .join(", ")}}`;
}

/** Formats made only of %v and %s, split around their verbs (null: another form). */
const simpleFormats = new Map<string, { parts: string[]; verbs: string[] } | null>();

/**
 * A format of only %v and %s verbs with as many strings (or integers below 1e6 for %v) as verbs,
 * put together directly, as Go prints those (the common case of a violation's message).
 */
function simpleSprintf(format: string, args: readonly unknown[]): string | undefined {
    let simple = simpleFormats.get(format);
    if (simple === undefined) {
        // A % ending the format is a verb of its own (Go prints %!(NOVERB)), never %v or %s.
        const verbs = [...format.matchAll(/%(.?)/gs)].map((m) => m[1]);
        simple = verbs.every((v) => v === "v" || v === "s") ? { parts: format.split(/%[vs]/), verbs } : null;
        simpleFormats.set(format, simple);
    }
    if (simple === null || simple.verbs.length !== args.length) return undefined;
    let out = simple.parts[0];
    for (let i = 0; i < args.length; i++) {
        const a = args[i];
        if (typeof a === "string") out += a;
        else if (typeof a === "number" && simple.verbs[i] === "v" && Number.isInteger(a) && a < 1e6 && a > -1e6) out += String(a);
        else return undefined;
        out += simple.parts[i + 1];
    }
    return out;
}

interface Spec {
    minus: boolean;
    plus: boolean;
    sharp: boolean;
    space: boolean;
    zero: boolean;
    width?: number;
    prec?: number;
}

export function regoSprintf(format: string, args: readonly unknown[]): string {
    const simple = simpleSprintf(format, args);
    if (simple !== undefined) return simple;
    const goArgs = args.map(goArg);
    let out = "";
    let argNum = 0;
    let i = 0;
    while (i < format.length) {
        const pct = format.indexOf("%", i);
        if (pct < 0) {
            out += format.slice(i);
            break;
        }
        out += format.slice(i, pct);
        i = pct + 1;
        const spec: Spec = { minus: false, plus: false, sharp: false, space: false, zero: false };
        for (; i < format.length; i++) {
            const c = format[i];
            if (c === "-") spec.minus = true;
            else if (c === "+") spec.plus = true;
            else if (c === "#") spec.sharp = true;
            else if (c === " ") spec.space = true;
            else if (c === "0") spec.zero = true;
            else break;
        }
        const num = () => {
            const m = /^\d+/.exec(format.slice(i));
            if (!m) return undefined;
            i += m[0].length;
            return Number(m[0]);
        };
        if (format[i] === "*") {
            i++;
            const a = goArgs[argNum++];
            if (a?.type === "int") {
                spec.width = Number(a.v);
                if (spec.width < 0) {
                    spec.minus = true;
                    spec.width = -spec.width;
                }
            } else out += "%!(BADWIDTH)";
        } else spec.width = num();
        if (format[i] === ".") {
            i++;
            if (format[i] === "*") {
                i++;
                const a = goArgs[argNum++];
                if (a?.type === "int" && a.v >= 0n) spec.prec = Number(a.v);
                else out += "%!(BADPREC)";
            } else spec.prec = num() ?? 0;
        }
        if (i >= format.length) {
            out += "%!(NOVERB)";
            break;
        }
        const verb = String.fromCodePoint(format.codePointAt(i)!);
        i += verb.length;
        if (verb === "%") {
            out += "%";
            continue;
        }
        if (argNum >= goArgs.length) {
            out += `%!${verb}(MISSING)`;
            continue;
        }
        if (spec.minus) spec.zero = false;
        out += formatArg(goArgs[argNum++], verb, spec);
    }
    if (argNum < goArgs.length) {
        out += "%!(EXTRA " + goArgs.slice(argNum).map((a) => `${a.type}=${formatArg(a, "v", plain())}`).join(", ") + ")";
    }
    return out;
}

const plain = (): Spec => ({ minus: false, plus: false, sharp: false, space: false, zero: false });

function pad(s: string, spec: Spec, numeric = false): string {
    const width = spec.width ?? 0;
    const len = [...s].length;
    if (len >= width) return s;
    const fill = width - len;
    if (spec.minus) return s + " ".repeat(fill);
    if (spec.zero && numeric) {
        const sign = /^[+\- ]/.test(s) ? s[0] : "";
        return sign + "0".repeat(fill) + s.slice(sign.length);
    }
    return " ".repeat(fill) + s;
}

/** Go's badVerb: the value printed with %v under the same flags, width and precision (`%.2f` of "null" is `%!f(string=nu)`). */
function badVerb(a: GoArg, verb: string, spec: Spec): string {
    return `%!${verb}(${a.type}=${formatArg(a, "v", spec)})`;
}

function formatArg(a: GoArg, verb: string, spec: Spec): string {
    if (a.type === "string") return formatString(a.v, verb, spec) ?? badVerb(a, verb, spec);
    if (a.type === "float64") return formatFloat(a.v, verb, spec) ?? badVerb(a, verb, spec);
    return formatInt(a.v, verb, spec) ?? badVerb(a, verb, spec);
}

function formatString(s: string, verb: string, spec: Spec): string | undefined {
    const truncated = spec.prec !== undefined ? [...s].slice(0, spec.prec).join("") : s;
    switch (verb) {
        case "v":
        case "s":
            return pad(truncated, spec);
        case "q":
            return pad(spec.sharp && !/[`\u0000-\u0008\u000a-\u001f\u007f]/.test(truncated) ? "`" + truncated + "`" : goQuote(truncated), spec);
        case "x":
        case "X": {
            const bytes = [...Buffer.from(truncated, "utf8")].map((b) => b.toString(16).padStart(2, "0"));
            const hex = bytes.join(spec.space ? " " : "");
            return pad(verb === "X" ? hex.toUpperCase() : hex, spec);
        }
        default:
            return undefined;
    }
}

function signed(body: string, negative: boolean, spec: Spec): string {
    return (negative ? "-" : spec.plus ? "+" : spec.space ? " " : "") + body;
}

function formatInt(n: bigint, verb: string, spec: Spec): string | undefined {
    const neg = n < 0n;
    const abs = neg ? -n : n;
    let body: string;
    switch (verb) {
        case "v":
        case "d":
            body = abs.toString(10);
            break;
        case "b":
            body = abs.toString(2);
            break;
        case "o":
            body = (spec.sharp ? "0" : "") + abs.toString(8);
            break;
        case "O":
            body = "0o" + abs.toString(8);
            break;
        case "x":
            body = (spec.sharp ? "0x" : "") + abs.toString(16);
            break;
        case "X":
            body = (spec.sharp ? "0X" : "") + abs.toString(16).toUpperCase();
            break;
        case "c":
            return pad(String.fromCodePoint(Number(n)), spec);
        case "q":
            return pad(goQuote(String.fromCodePoint(Number(n))).replace(/^"|"$/g, "'"), spec);
        case "U":
            return pad("U+" + abs.toString(16).toUpperCase().padStart(4, "0"), spec);
        default:
            return undefined;
    }
    if (spec.prec !== undefined) {
        if (spec.prec === 0 && n === 0n) body = "";
        else body = body.padStart(spec.prec, "0");
        return pad(signed(body, neg, spec), { ...spec, zero: false }, true);
    }
    return pad(signed(body, neg, spec), spec, true);
}

/** Go's exponent form: at least two digits (1e+06). */
function goExp(s: string): string {
    return s.replace(/e([+-])(\d)$/, "e$10$2");
}

function formatFloat(f: number, verb: string, spec: Spec): string | undefined {
    if (!Number.isFinite(f)) {
        const s = Number.isNaN(f) ? "NaN" : f > 0 ? (spec.plus ? "+Inf" : "+Inf".slice(1)) : "-Inf";
        return pad(s, { ...spec, zero: false });
    }
    const neg = f < 0 || Object.is(f, -0);
    const abs = Math.abs(f);
    let body: string;
    switch (verb) {
        case "v":
        case "g":
        case "G":
            body = shortestG(abs, spec.prec);
            if (verb === "G") body = body.toUpperCase();
            break;
        case "f":
        case "F":
            body = fixed(abs, spec.prec ?? 6);
            break;
        case "e":
        case "E":
            body = goExp(abs.toExponential(spec.prec ?? 6));
            if (verb === "E") body = body.toUpperCase();
            break;
        case "x":
        case "X":
            if (spec.prec !== undefined) return undefined;
            body = hexFloat(abs);
            if (verb === "X") body = body.toUpperCase();
            break;
        case "b": {
            const { mant, exp } = float64Parts(abs);
            body = `${mant}p${exp - 52 < 0 ? "-" : "+"}${Math.abs(exp - 52)}`;
            break;
        }
        default:
            return undefined;
    }
    return pad(signed(body, neg, spec), spec, true);
}

/** The integer mantissa (53 bits for a normal number) and the exponent e of abs = mant × 2^(e-52), as strconv's %b reads them. */
function float64Parts(abs: number): { mant: bigint; exp: number } {
    const view = new DataView(new ArrayBuffer(8));
    view.setFloat64(0, abs);
    const bits = view.getBigUint64(0);
    const biased = Number((bits >> 52n) & 0x7ffn);
    const frac = bits & ((1n << 52n) - 1n);
    return biased === 0 ? { mant: frac, exp: -1022 } : { mant: frac | (1n << 52n), exp: biased - 1023 };
}

/** strconv's %x of a float64 with the shortest precision: 0x1.8p+00. */
function hexFloat(abs: number): string {
    if (abs === 0) return "0x0p+00";
    let { mant, exp } = float64Parts(abs);
    while (mant < 1n << 52n) {
        mant <<= 1n;
        exp--;
    }
    const frac = (mant & ((1n << 52n) - 1n)).toString(16).padStart(13, "0").replace(/0+$/, "");
    return `0x1${frac ? "." + frac : ""}p${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
}

/** %f: JavaScript's toFixed switches to exponent form from 1e21; Go prints every digit. */
function fixed(abs: number, prec: number): string {
    if (abs < 1e21) return abs.toFixed(prec);
    const int = BigInt(abs).toString();
    return prec > 0 ? `${int}.${"0".repeat(prec)}` : int;
}

/** strconv.FormatFloat(f, 'g', prec): %e when the exponent is < -4 or >= the precision (6 for the shortest form). */
function shortestG(abs: number, prec: number | undefined): string {
    if (abs === 0) return "0";
    const e = abs.toExponential(prec !== undefined ? Math.max(prec - 1, 0) : undefined);
    const [mant, expText] = e.split("e");
    const exp = Number(expText);
    const digits = mant.replace(".", "").replace(/0+$/, "") || "0";
    const eprec = prec === undefined ? 6 : Math.max(prec, 1) > digits.length && digits.length >= exp + 1 ? digits.length : Math.max(prec, 1);
    if (exp < -4 || exp >= eprec) {
        const m = digits.length > 1 ? digits[0] + "." + digits.slice(1) : digits;
        return goExp(`${m}e${exp < 0 ? "-" : "+"}${Math.abs(exp)}`);
    }
    if (exp >= 0) {
        const intPart = digits.slice(0, exp + 1).padEnd(exp + 1, "0");
        const frac = digits.slice(exp + 1);
        return frac ? `${intPart}.${frac}` : intPart;
    }
    return "0." + "0".repeat(-exp - 1) + digits;
}
