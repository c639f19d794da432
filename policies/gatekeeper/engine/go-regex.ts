/**
 * Compiles a regular expression written for Go/RE2 (what Rego's regex.match uses) as a JS RegExp
 * with the same unanchored "contains a match" semantics. Leading inline flags such as (?i) become
 * RegExp flags, \A and \z become ^ and $. Compiled patterns are cached.
 */
const cache = new Map<string, RegExp>();

export function goRegex(pattern: string): RegExp {
    let re = cache.get(pattern);
    if (re) return re;
    let source = pattern;
    let flags = "";
    const inline = /^\(\?([imsU]+)\)/.exec(source);
    if (inline) {
        source = source.slice(inline[0].length);
        for (const f of inline[1]) if (f !== "U" && !flags.includes(f)) flags += f;
    }
    source = source.replace(/\\A/g, "^").replace(/\\z/g, "$");
    try {
        re = new RegExp(source, flags);
    } catch (err) {
        throw new Error(`invalid regular expression ${JSON.stringify(pattern)}: ${(err as Error).message}`);
    }
    cache.set(pattern, re);
    return re;
}

export function goRegexMatches(pattern: string, value: string): boolean {
    return goRegex(pattern).test(value);
}
