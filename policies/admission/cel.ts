/**
 * Building blocks for the CEL of the admission policies: literals (parameters are inlined, see
 * docs/admission.md), safe field access on objects that may lack a field, and the pod views
 * the Pod templates judge.
 */

/** A CEL literal for a JSON value (strings quoted, lists and maps recursively). */
export function lit(value: unknown): string {
    if (value === null || value === undefined) return "null";
    if (typeof value === "string") return JSON.stringify(value);
    if (typeof value === "boolean") return value ? "true" : "false";
    if (typeof value === "number") {
        if (!Number.isFinite(value)) throw new Error(`cannot express ${value} in CEL`);
        return Number.isInteger(value) ? String(value) : value.toString().includes(".") ? String(value) : `${value}.0`;
    }
    if (Array.isArray(value)) return `[${value.map(lit).join(", ")}]`;
    if (typeof value === "object") {
        return `{${Object.entries(value as Record<string, unknown>).map(([k, v]) => `${JSON.stringify(k)}: ${lit(v)}`).join(", ")}}`;
    }
    throw new Error(`cannot express ${typeof value} in CEL`);
}

/** A list of strings as a CEL list literal (empty when absent). */
export function strings(list: readonly string[] | undefined): string {
    return lit(list ?? []);
}

/**
 * `base.a.b.c` when every step is present, else `dflt`: has() chains, so a missing field never
 * raises an evaluation error (which failurePolicy Fail would turn into a rejection).
 */
export function get(base: string, path: string, dflt: string): string {
    return `(${present(base, path)} ? ${base}.${path} : ${dflt})`;
}

/** True when every step of `base.a.b.c` is present. */
export function present(base: string, path: string): string {
    const steps = path.split(".");
    const checks: string[] = [];
    for (let i = 1; i <= steps.length; i++) checks.push(`has(${base}.${steps.slice(0, i).join(".")})`);
    return checks.length === 1 ? checks[0] : `(${checks.join(" && ")})`;
}

/** The three container lists of a pod (`pod` is a Pod or a pod template), in Gatekeeper's order. */
export function allContainers(pod: string): string {
    return `(${get(pod, "spec.containers", "[]")} + ${get(pod, "spec.initContainers", "[]")} + ${get(pod, "spec.ephemeralContainers", "[]")})`;
}

/** Only regular and init containers (ephemeral containers cannot set resources or mounts). */
export function containersAndInit(pod: string): string {
    return `(${get(pod, "spec.containers", "[]")} + ${get(pod, "spec.initContainers", "[]")})`;
}

/** Regular containers only. */
export function regularContainers(pod: string): string {
    return get(pod, "spec.containers", "[]");
}

/**
 * Gatekeeper's exemptImages: an entry ending in `*` is a prefix, any other must equal the
 * image. Returns a CEL condition on the container variable `c`, or "false" when nothing is exempt.
 */
export function exempt(c: string, exemptImages: readonly string[] | undefined): string {
    const list = (exemptImages ?? []).filter((e) => typeof e === "string");
    if (list.length === 0) return "false";
    const prefixes = list.filter((e) => e.endsWith("*")).map((e) => e.slice(0, -1));
    const exact = list.filter((e) => !e.endsWith("*"));
    const parts: string[] = [];
    if (exact.length > 0) parts.push(`${get(c, "image", '""')} in ${lit(exact)}`);
    if (prefixes.length > 0) parts.push(`${lit(prefixes)}.exists(p, ${get(c, "image", '""')}.startsWith(p))`);
    return `(${parts.join(" || ")})`;
}

/** `list.all(c, exempt(c) || ok(c))`: every non-exempt container passes. */
export function everyContainer(list: string, exemptImages: readonly string[] | undefined, ok: (c: string) => string): string {
    const ex = exempt("c", exemptImages);
    return ex === "false" ? `${list}.all(c, ${ok("c")})` : `${list}.all(c, ${ex} || (${ok("c")}))`;
}

/** Gatekeeper's name globs (prefix*, *suffix, *infix*, exact) as a CEL condition on `value`. */
export function globMatch(value: string, pattern: string): string {
    if (pattern === "*") return "true";
    const leading = pattern.startsWith("*");
    const trailing = pattern.length > 1 && pattern.endsWith("*");
    if (leading && trailing) return `${value}.contains(${lit(pattern.slice(1, -1))})`;
    if (leading) return `${value}.endsWith(${lit(pattern.slice(1))})`;
    if (trailing) return `${value}.startsWith(${lit(pattern.slice(0, -1))})`;
    return `${value} == ${lit(pattern)}`;
}

export function anyGlob(value: string, patterns: readonly string[]): string {
    if (patterns.length === 0) return "false";
    return `(${patterns.map((p) => globMatch(value, p)).join(" || ")})`;
}

/**
 * `cond` or one of `fields` of `c` absent: the library's message uses those fields (sprintf of an
 * undefined value), so without them the Rego has no violation to report.
 */
export function unlessAbsent(c: string, fields: readonly string[], cond: string): string {
    return `(${fields.map((f) => `!has(${c}.${f})`).join(" || ")} || (${cond}))`;
}

/** `cond` or the reviewed object has no metadata.name (the library's message uses it; an expanded pod always has one). */
export function unlessNameless(cond: string): string {
    return `(!has(object.metadata) || !has(object.metadata.name) || (${cond}))`;
}
