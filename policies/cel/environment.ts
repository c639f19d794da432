/**
 * The Kubernetes CEL environment, offline, with @marcbachmann/cel-js: the admission policies are
 * evaluated with it (policies/admission/simulate.ts) and so is a team template's CEL (./judge.ts).
 * It has the standard library, macros and the string extensions the policies use (lowerAscii,
 * split, substring, lastIndexOf, matches). The one Kubernetes extension the policies call, the
 * quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go: quantity(), compareTo(),
 * asApproximateFloat()), is not in cel-js: it is implemented here on Kubernetes' quantity syntax.
 * Nor is the strings extension's `replace` (cel-go ext/strings.go, in the API server's base
 * environment), which the library's CEL templates call: goReplace below. `matches` uses
 * JavaScript regular expressions here and RE2 in the API server; the patterns the policies use
 * mean the same in both.
 */
import { Environment } from "@marcbachmann/cel-js";

/** A resource.Quantity: its exact value as a fraction of BigInts (numerator / 10^scale). */
export class Quantity {
    constructor(readonly num: bigint, readonly scale: bigint) {}
    compare(other: Quantity): number {
        const s = this.scale > other.scale ? this.scale : other.scale;
        const a = this.num * 10n ** (s - this.scale);
        const b = other.num * 10n ** (s - other.scale);
        return a < b ? -1 : a > b ? 1 : 0;
    }
    toNumber(): number {
        return Number(this.num) / 10 ** Number(this.scale);
    }
}

const BINARY: Record<string, bigint> = { Ki: 1n << 10n, Mi: 1n << 20n, Gi: 1n << 30n, Ti: 1n << 40n, Pi: 1n << 50n, Ei: 1n << 60n };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, "": 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
const SYNTAX = /^([+-]?)([0-9]+(?:\.[0-9]*)?|\.[0-9]+)(Ki|Mi|Gi|Ti|Pi|Ei|[numkMGTPE]|[eE][+-]?[0-9]+)?$/;

/** Kubernetes' quantity syntax (resource.ParseQuantity); throws like quantity() does on bad input. */
export function parseQuantity(text: string): Quantity {
    const m = SYNTAX.exec(text);
    if (!m) throw new Error(`quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$': ${JSON.stringify(text)}`);
    const [, sign, number, suffix = ""] = m;
    const [whole, frac = ""] = number.split(".");
    let num = BigInt(`${sign === "-" ? "-" : ""}${whole || "0"}${frac}`);
    let scale = BigInt(frac.length);
    if (BINARY[suffix] !== undefined) num *= BINARY[suffix];
    else {
        const exp = /^[eE]/.test(suffix) ? Number(suffix.slice(1)) : DECIMAL[suffix];
        if (exp >= 0) num *= 10n ** BigInt(exp);
        else scale += BigInt(-exp);
    }
    return new Quantity(num, scale);
}

/**
 * cel-go's `string.replace(old, new[, n])` (ext/strings.go: strings.ReplaceAll, or
 * strings.Replace with n; a negative n replaces all, 0 none), Go's semantics: an empty `old`
 * matches before every character (code point) and at the end.
 */
export function goReplace(s: string, old: string, replacement: string, n = -1): string {
    if (old === replacement || n === 0) return s;
    if (old !== "") {
        const parts = s.split(old);
        if (n < 0 || n >= parts.length - 1) return parts.join(replacement);
        return parts.slice(0, n + 1).join(replacement) + old + parts.slice(n + 1).join(old);
    }
    const chars = Array.from(s);
    const count = chars.length + 1;
    const m = n < 0 || n > count ? count : n;
    let out = "";
    for (let i = 0; i < m; i++) out += replacement + (i < chars.length ? chars[i] : "");
    return out + chars.slice(m).join("");
}

export function kubernetesCelEnvironment(): Environment {
    // Homogeneous list and map literals, as the API server's base environment requires (cel.HomogeneousAggregateLiterals).
    return new Environment({ unlistedVariablesAreDyn: true, homogeneousAggregateLiterals: true })
        .registerType("Quantity", Quantity)
        .registerFunction("quantity(string): Quantity", (s: string) => parseQuantity(s))
        .registerFunction("isQuantity(string): bool", (s: string) => SYNTAX.test(s))
        .registerFunction("Quantity.compareTo(Quantity): int", (a: Quantity, b: Quantity) => BigInt(a.compare(b)))
        .registerFunction("Quantity.asApproximateFloat(): double", (a: Quantity) => a.toNumber())
        .registerFunction("string.replace(string, string): string", (s: string, old: string, r: string) => goReplace(s, old, r))
        .registerFunction("string.replace(string, string, int): string", (s: string, old: string, r: string, n: bigint) => goReplace(s, old, r, Number(n)));
}

const shared = kubernetesCelEnvironment();
const compiled = new Map<string, ReturnType<typeof shared.parse>>();

/** Evaluates `expression` (parsed once per process) in the Kubernetes environment with the variables of `ctx`. */
export function evaluateCel(expression: string, ctx: Record<string, unknown>): unknown {
    let fn = compiled.get(expression);
    if (!fn) compiled.set(expression, (fn = shared.parse(expression)));
    return fn(ctx);
}

/** Type-checks an expression with every variable dynamic; returns the error, if any. */
export function celCheckError(expression: string): string | undefined {
    const result = shared.check(expression);
    return result.valid ? undefined : String(result.error?.message ?? result.error);
}

/**
 * The object as the API server hands it to CEL: fields set to null are gone (the typed decoding
 * drops them), integers are CEL ints, and resource quantities are strings.
 */
export function asDecoded(value: unknown, key = ""): unknown {
    if (value === null || value === undefined) return undefined;
    if (Array.isArray(value)) return value.map((v) => asDecoded(v)).filter((v) => v !== undefined);
    if (typeof value === "number") return Number.isInteger(value) ? BigInt(value) : value;
    if (typeof value === "object") {
        const out: Record<string, unknown> = {};
        const quantities = key === "limits" || key === "requests";
        // Labels and annotations are map[string]string: a null value decodes as "" (the key stays).
        const stringMap = key === "labels" || key === "annotations";
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
            const d = quantities && typeof v === "number" ? String(v) : stringMap && v === null ? "" : asDecoded(v, k);
            if (d !== undefined) out[k] = d;
        }
        return out;
    }
    return value;
}
