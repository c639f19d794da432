import type { Violation } from "../types";
import { goRegexMatches } from "./go-regex";
import { regoFormat } from "../templates/lib/pod";

/**
 * Shared by requiredlabels and requiredannotations: every listed key must be present, and when
 * an entry has a non-empty allowedRegex the value must contain a match for it. For labels, a
 * constraint's `message` replaces the default messages (the annotations Rego has no such rule).
 * As the library's Rego: a key counts as provided unless its value is false (`labels[label]`);
 * a value that is not a string (null, a number) never matches a regex (regex.match is undefined
 * for it), nor does any value for a pattern that does not compile.
 */
export interface RequiredKey {
    key?: string;
    allowedRegex?: string;
}

export interface RequiredKeysWording {
    /** e.g. "you must provide labels" */
    missing: string;
    /** e.g. "Label" */
    noun: string;
    /** details key for the missing keys, e.g. "missing_labels" */
    detailsKey: string;
}

export function requiredKeyViolations(
    present: Record<string, unknown> | undefined,
    required: readonly RequiredKey[] | undefined,
    customMessage: string | undefined,
    wording: RequiredKeysWording,
): Violation[] {
    const values = present && typeof present === "object" ? present : {};
    const entries = required ?? [];
    const out: Violation[] = [];
    const missing = new Set<string>();
    for (const { key } of entries) {
        if (typeof key === "string" && (!Object.prototype.hasOwnProperty.call(values, key) || values[key] === false)) missing.add(key);
    }
    if (missing.size > 0) {
        out.push({
            msg: customMessage ?? `${wording.missing}: ${regoFormat(missing)}`,
            details: { [wording.detailsKey]: [...missing].sort() },
        });
    }
    const seen = new Set<string>();
    for (const { key, allowedRegex } of entries) {
        if (typeof key !== "string" || !allowedRegex || !Object.prototype.hasOwnProperty.call(values, key)) continue;
        const value = values[key];
        if (typeof value === "string" && matches(allowedRegex, value)) continue;
        const msg = customMessage ?? `${wording.noun} <${key}: ${regoFormat(value)}> does not satisfy allowed regex: ${regoFormat(allowedRegex)}`;
        if (!seen.has(msg)) out.push({ msg });
        seen.add(msg);
    }
    return out;
}

function matches(pattern: string, value: string): boolean {
    try {
        return goRegexMatches(pattern, value);
    } catch {
        return false;
    }
}
