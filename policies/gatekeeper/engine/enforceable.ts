/**
 * What both enforcement points need from a constraint, checked when the constraint file loads
 * (issue 22): the policy pack evaluates it, and policies/admission turns it into a
 * ValidatingAdmissionPolicy the API server must compile. A constraint that passes here never
 * yields a policy the API server refuses, or a pattern the pack cannot run in linear time:
 *   - metadata.name is a DNS subdomain of at most 63 characters (Gatekeeper refuses longer
 *     constraint names), and the policy's name gatekeeper-<kind>-<name> has at most 253;
 *   - every regular expression parameter is RE2 (Rego's regex.match and Kubernetes CEL's
 *     matches() both use RE2; the pack matches with RE2 too, see ./go-regex);
 *   - every exact namespace in match.namespaces / match.excludedNamespaces and in the Config's
 *     excludedNamespaces is a namespace name: it becomes a label value of kubernetes.io/metadata.name
 *     in the admission policy's namespaceSelector; globs ("kube-*") must be made of name characters;
 *   - every string is well-formed Unicode: a lone surrogate cannot be a CEL string literal.
 */
import { re2Problem } from "./go-regex";

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const DNS_LABEL = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const GLOB = /^\*?[-a-z0-9]*\*?$/;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/** Parameters that templates read as regular expressions, by constraint kind: path → pattern. */
const REGEX_PARAMETERS: Record<string, (parameters: any) => [string, unknown][]> = {
    K8sRequiredLabels: (p) => (Array.isArray(p?.labels) ? p.labels.map((e: any, i: number) => [`parameters.labels[${i}].allowedRegex`, e?.allowedRegex]) : []),
    K8sRequiredAnnotations: (p) => (Array.isArray(p?.annotations) ? p.annotations.map((e: any, i: number) => [`parameters.annotations[${i}].allowedRegex`, e?.allowedRegex]) : []),
};

/** The reason a namespace entry cannot be a namespace name (or glob of names), or undefined. */
export function namespaceEntryProblem(entry: unknown): string | undefined {
    if (typeof entry !== "string") return `must be a string, got ${JSON.stringify(entry)}`;
    if (entry.includes("*")) {
        return GLOB.test(entry) && entry.length <= 64 ? undefined : `${JSON.stringify(entry)} is not a namespace glob (lowercase letters, digits and '-', with '*' at the start or end)`;
    }
    if (entry.length > 63 || !DNS_LABEL.test(entry)) {
        return `${JSON.stringify(entry)} is not a namespace name (at most 63 lowercase letters, digits and '-', starting and ending with a letter or digit); ` +
            "the admission policy would carry it as a label value of kubernetes.io/metadata.name";
    }
    return undefined;
}

/** Paths of strings holding a lone surrogate (which CEL cannot hold), keys included. */
function surrogatePaths(value: unknown, at: string, out: string[]): void {
    if (typeof value === "string") {
        if (LONE_SURROGATE.test(value)) out.push(at);
    } else if (Array.isArray(value)) value.forEach((v, i) => surrogatePaths(v, `${at}[${i}]`, out));
    else if (value !== null && typeof value === "object") {
        for (const [k, v] of Object.entries(value)) {
            if (LONE_SURROGATE.test(k)) out.push(`${at} key ${JSON.stringify(k)}`);
            surrogatePaths(v, `${at}.${k}`, out);
        }
    }
}

/** Every problem of one constraint; the policy name prefix is the admission policy's (gatekeeper-<kind>-). */
export function enforceabilityProblems(kind: string, name: string, spec: { match?: any; parameters?: unknown }): string[] {
    const problems: string[] = [];
    if (typeof name !== "string" || !DNS_SUBDOMAIN.test(name) || name.length > 63) {
        problems.push(`metadata.name ${JSON.stringify(name)} is not a DNS subdomain name of at most 63 characters (lowercase letters, digits, '-' and '.', starting and ending with a letter or digit), as Gatekeeper requires of a constraint`);
    } else {
        const policy = `gatekeeper-${kind.toLowerCase()}-${name}`;
        if (policy.length > 253) problems.push(`metadata.name is too long: the admission policy name ${policy} has ${policy.length} characters (at most 253)`);
    }
    for (const field of ["namespaces", "excludedNamespaces"] as const) {
        const list = spec.match?.[field];
        if (!Array.isArray(list)) continue;
        list.forEach((entry: unknown, i: number) => {
            const p = namespaceEntryProblem(entry);
            if (p) problems.push(`spec.match.${field}[${i}]: ${p}`);
        });
    }
    for (const [at, pattern] of REGEX_PARAMETERS[kind]?.(spec.parameters) ?? []) {
        if (typeof pattern !== "string" || pattern === "") continue;
        const p = re2Problem(pattern);
        if (p) problems.push(`spec.${at}: ${p}`);
    }
    const lone: string[] = [];
    surrogatePaths(spec, "spec", lone);
    for (const at of lone) problems.push(`${at}: the string holds a lone UTF-16 surrogate, which is not Unicode text and cannot be a CEL string`);
    return problems;
}
