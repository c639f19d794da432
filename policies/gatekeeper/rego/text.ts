/**
 * Go's text and order of strings and numbers, as OPA 1.17.1 uses them, for the Rego runtime
 * (./values.ts, ./sprintf.ts) under the compiled plans, the Wasm host and the TypeScript
 * templates' helpers (../templates/lib/pod.ts): one place to change the order of strings, the
 * quoting of a term's strings or the text of a float64.
 */

/** Go's strings.Compare: byte order of the UTF-8 encodings, which is code point order. */
export function compareStrings(a: string, b: string): number {
    if (a === b) return 0;
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
        const x = a.charCodeAt(i);
        const y = b.charCodeAt(i);
        if (x !== y) {
            // UTF-16 code units order code points but for surrogates (U+10000 and above) against U+E000-U+FFFF.
            const sx = x >= 0xd800 && x <= 0xdfff;
            const sy = y >= 0xd800 && y <= 0xdfff;
            if (sx !== sy) return sx ? 1 : -1;
            return x < y ? -1 : 1;
        }
    }
    return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
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

/** strconv.FormatFloat(x, 'g', -1, 64): how Go (and so OPA, for Gatekeeper's input) writes a float64. */
export function goFloatText(x: number): string {
    if (!Number.isFinite(x)) return x > 0 ? "+Inf" : x < 0 ? "-Inf" : "NaN";
    if (x === 0) return Object.is(x, -0) ? "-0" : "0";
    const [mant, e] = x.toExponential().split("e");
    const exp = Number(e);
    if (exp < -4 || exp >= 6) {
        return `${mant}e${exp < 0 ? "-" : "+"}${String(Math.abs(exp)).padStart(2, "0")}`;
    }
    return String(x);
}
