/**
 * Gatekeeper's name globs (util.Wildcard): "kube-*" is a prefix, "*-system" a suffix,
 * "*x*" a substring, anything else an exact name.
 */
export function compileWildcard(pattern: string): (candidate: string) => boolean {
    const leading = pattern.startsWith("*");
    const trailing = pattern.length > 1 && pattern.endsWith("*");
    if (pattern === "*") return () => true;
    if (leading && trailing) {
        const middle = pattern.slice(1, -1);
        return (c) => c.includes(middle);
    }
    if (leading) {
        const suffix = pattern.slice(1);
        return (c) => c.endsWith(suffix);
    }
    if (trailing) {
        const prefix = pattern.slice(0, -1);
        return (c) => c.startsWith(prefix);
    }
    return (c) => c === pattern;
}

/** One predicate for a list of globs: true when any glob matches. */
export function compileWildcardList(patterns: readonly string[]): (candidate: string) => boolean {
    const exact = new Set(patterns.filter((p) => !p.includes("*")));
    const globs = patterns.filter((p) => p.includes("*")).map(compileWildcard);
    if (globs.length === 0) return (c) => exact.has(c);
    return (c) => exact.has(c) || globs.some((g) => g(c));
}
