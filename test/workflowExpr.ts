/**
 * A small evaluator of GitHub Actions expressions (the `if:` of jobs and steps), with the
 * semantics of GitHub's documentation "Evaluate expressions in workflows and actions": string
 * comparison ignores case, operands of different types are compared as numbers (null, '' and
 * false are 0), a missing property is null, and the status functions are given by the caller.
 * Enough for the conditions the workflows use: literals, property paths (with `.*` object filters),
 * ! == != < <= > >= && ||, parentheses and the functions contains, startsWith, endsWith, format,
 * join, toJSON, fromJSON and the status checks.
 */
export type Value = string | number | boolean | null | Value[] | { [k: string]: Value };
export type Context = Record<string, Value>;

type Token = { kind: "str" | "num" | "id" | "op" | "punct"; text: string };

function tokenize(src: string): Token[] {
    const out: Token[] = [];
    let i = 0;
    while (i < src.length) {
        const c = src[i];
        if (/\s/.test(c)) { i++; continue; }
        if (c === "'") {
            let s = "";
            i++;
            for (;;) {
                if (i >= src.length) throw new Error(`unterminated string in ${src}`);
                if (src[i] === "'" && src[i + 1] === "'") { s += "'"; i += 2; continue; }
                if (src[i] === "'") { i++; break; }
                s += src[i++];
            }
            out.push({ kind: "str", text: s });
            continue;
        }
        const two = src.slice(i, i + 2);
        if (["==", "!=", "<=", ">=", "&&", "||"].includes(two)) { out.push({ kind: "op", text: two }); i += 2; continue; }
        if ("!<>".includes(c)) { out.push({ kind: "op", text: c }); i++; continue; }
        if ("(),.[]*".includes(c)) { out.push({ kind: "punct", text: c }); i++; continue; }
        const num = /^-?\d+(\.\d+)?/.exec(src.slice(i));
        if (num) { out.push({ kind: "num", text: num[0] }); i += num[0].length; continue; }
        const id = /^[A-Za-z_][\w-]*/.exec(src.slice(i));
        if (id) { out.push({ kind: "id", text: id[0] }); i += id[0].length; continue; }
        throw new Error(`unexpected ${c} in ${src}`);
    }
    return out;
}

const toNumber = (v: Value): number => (v === null ? 0 : typeof v === "boolean" ? Number(v) : typeof v === "number" ? v : typeof v === "string" ? (v.trim() === "" ? 0 : Number(v)) : NaN);
export const truthy = (v: Value): boolean => !(v === false || v === null || v === "" || v === 0 || (typeof v === "number" && Number.isNaN(v)));
const str = (v: Value): string => (v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));

function equal(a: Value, b: Value): boolean {
    if (typeof a === "string" && typeof b === "string") return a.toLowerCase() === b.toLowerCase();
    if (typeof a === typeof b && typeof a !== "object") return a === b;
    if (a === null && b === null) return true;
    if ((typeof a === "object" && a !== null) || (typeof b === "object" && b !== null)) return a === b;
    return toNumber(a) === toNumber(b);
}

function compare(a: Value, b: Value): number {
    if (typeof a === "string" && typeof b === "string") return a.toLowerCase() < b.toLowerCase() ? -1 : a.toLowerCase() > b.toLowerCase() ? 1 : 0;
    return toNumber(a) - toNumber(b);
}

export interface Status { success?: boolean; failure?: boolean; cancelled?: boolean }

/** Evaluates one expression, with or without its `${{ }}`. */
export function evaluate(expression: string, ctx: Context, status: Status = {}): Value {
    const src = expression.trim().replace(/^\$\{\{([\s\S]*)\}\}$/, "$1");
    const t = tokenize(src);
    let p = 0;
    const peek = () => t[p];
    const eat = (text?: string) => {
        const tok = t[p];
        if (!tok || (text !== undefined && tok.text !== text)) throw new Error(`expected ${text ?? "a token"} at ${p} in ${src}`);
        p++;
        return tok;
    };
    const call = (name: string, args: Value[]): Value => {
        switch (name.toLowerCase()) {
            case "contains": return Array.isArray(args[0]) ? args[0].some((x) => equal(x, args[1])) : str(args[0]).toLowerCase().includes(str(args[1]).toLowerCase());
            case "startswith": return str(args[0]).toLowerCase().startsWith(str(args[1]).toLowerCase());
            case "endswith": return str(args[0]).toLowerCase().endsWith(str(args[1]).toLowerCase());
            case "format": return str(args[0]).replace(/\{(\d+)\}/g, (_, i) => str(args[Number(i) + 1]));
            // join(array, separator = ','); a string joins as itself.
            case "join": return Array.isArray(args[0]) ? args[0].map(str).join(args.length > 1 ? str(args[1]) : ",") : str(args[0]);
            case "tojson": return JSON.stringify(args[0] ?? null, null, 2);
            case "fromjson": return JSON.parse(str(args[0])) as Value;
            case "success": return status.success ?? true;
            case "failure": return status.failure ?? false;
            case "cancelled": return status.cancelled ?? false;
            case "always": return true;
            default: throw new Error(`function ${name} is not known to the evaluator`);
        }
    };
    const primary = (): Value => {
        const tok = eat();
        if (tok.kind === "str") return tok.text;
        if (tok.kind === "num") return Number(tok.text);
        if (tok.text === "(") { const v = or(); eat(")"); return v; }
        if (tok.kind !== "id") throw new Error(`unexpected ${tok.text} in ${src}`);
        if (tok.text === "true") return true;
        if (tok.text === "false") return false;
        if (tok.text === "null") return null;
        if (peek()?.text === "(") {
            eat("(");
            const args: Value[] = [];
            while (peek()?.text !== ")") { args.push(or()); if (peek()?.text === ",") eat(","); }
            eat(")");
            return call(tok.text, args);
        }
        let v: Value = ctx[tok.text] ?? null;
        // After a `.*` filter the path applies to each element of the array it made.
        let filtered = false;
        const field = (x: Value, key: string): Value => (x && typeof x === "object" && !Array.isArray(x) ? (x[key] ?? null) : null);
        for (;;) {
            if (peek()?.text === "." && t[p + 1]?.text === "*") {
                eat("."); eat("*");
                const each = (x: Value): Value[] => (Array.isArray(x) ? x : x && typeof x === "object" ? Object.values(x) : []);
                v = filtered && Array.isArray(v) ? v.flatMap(each) : each(v);
                filtered = true;
                continue;
            }
            if (peek()?.text === ".") { eat("."); const key = eat().text; v = filtered && Array.isArray(v) ? v.map((x) => field(x, key)) : field(v, key); continue; }
            if (peek()?.text === "[") { eat("["); const key = str(or()); eat("]"); v = Array.isArray(v) ? (/^\d+$/.test(key) ? (v[Number(key)] ?? null) : null) : v && typeof v === "object" ? (v[key] ?? null) : null; continue; }
            return v;
        }
    };
    const unary = (): Value => (peek()?.text === "!" ? (eat("!"), !truthy(unary())) : primary());
    const comparison = (): Value => {
        let v = unary();
        while (peek() && ["==", "!=", "<", "<=", ">", ">="].includes(peek().text)) {
            const op = eat().text;
            const r = unary();
            v = op === "==" ? equal(v, r) : op === "!=" ? !equal(v, r) : op === "<" ? compare(v, r) < 0 : op === "<=" ? compare(v, r) <= 0 : op === ">" ? compare(v, r) > 0 : compare(v, r) >= 0;
        }
        return v;
    };
    const and = (): Value => { let v = comparison(); while (peek()?.text === "&&") { eat(); const r = comparison(); v = truthy(v) ? r : v; } return v; };
    const or = (): Value => { let v = and(); while (peek()?.text === "||") { eat(); const r = and(); v = truthy(v) ? v : r; } return v; };
    const v = or();
    if (p !== t.length) throw new Error(`unexpected ${t[p].text} in ${src}`);
    return v;
}

/** A job's or step's `if:`: absent means run (when the jobs it needs succeeded). */
export function runs(condition: unknown, ctx: Context, status: Status = {}): boolean {
    if (condition === undefined || condition === null) return true;
    if (typeof condition === "boolean") return condition;
    return truthy(evaluate(String(condition), ctx, status));
}

/** A value with `${{ }}` expressions in it (an `env:` entry, a `with:` input), as the runner substitutes them. */
export function interpolate(text: unknown, ctx: Context): string {
    const asString = (v: Value) => (v === null ? "" : typeof v === "object" ? JSON.stringify(v) : String(v));
    return String(text ?? "").replace(/\$\{\{([\s\S]*?)\}\}/g, (_, e: string) => asString(evaluate(e, ctx)));
}
