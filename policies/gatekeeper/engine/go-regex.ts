/**
 * Regular expressions in the dialect Rego's regex.match and Kubernetes CEL's matches() use: RE2
 * (re2js, a port of RE2/J). Matching is linear in the input, so no pattern can backtrack
 * catastrophically, and a pattern RE2 refuses (lookaround, backreferences, an unclosed group) is
 * refused here too. Same unanchored "contains a match" semantics as regex.match; inline flags
 * ((?i)), \A and \z are RE2's own. Compiled patterns are cached.
 */
import { RE2JS } from "re2js";

export interface GoRegex {
    /** True when the value contains a match. */
    test(value: string): boolean;
}

const cache = new Map<string, GoRegex>();

export function goRegex(pattern: string): GoRegex {
    let re = cache.get(pattern);
    if (re) return re;
    let compiled: RE2JS;
    try {
        compiled = RE2JS.compile(pattern);
    } catch (err) {
        throw new Error(`invalid regular expression ${JSON.stringify(pattern)} (RE2 syntax, as Rego and Kubernetes CEL use): ${(err as Error).message}`);
    }
    re = { test: (value) => compiled.matcher(value).find() };
    cache.set(pattern, re);
    return re;
}

/** The reason `pattern` is not an RE2 expression, or undefined when it is one. */
export function re2Problem(pattern: string): string | undefined {
    try {
        goRegex(pattern);
        return undefined;
    } catch (err) {
        return (err as Error).message;
    }
}

export function goRegexMatches(pattern: string, value: string): boolean {
    return goRegex(pattern).test(value);
}
