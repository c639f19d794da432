import type { Violation } from "../types";
import { goRegexMatches } from "./go-regex";
import { regoFormat } from "../templates/lib/pod";

/**
 * Shared by requiredlabels and requiredannotations: every listed key must be present, and when
 * an entry has a non-empty allowedRegex the value must contain a match for it. A constraint's
 * `message` replaces the default messages.
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
        if (typeof key === "string" && !Object.prototype.hasOwnProperty.call(values, key)) missing.add(key);
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
        const value = String(values[key]);
        if (goRegexMatches(allowedRegex, value)) continue;
        const msg = customMessage ?? `${wording.noun} <${key}: ${value}> does not satisfy allowed regex: ${allowedRegex}`;
        if (!seen.has(msg)) out.push({ msg });
        seen.add(msg);
    }
    return out;
}
