/** The replacements of a stack diff (replacements.ts) as Markdown lines for the pull-request comment. */
import { describeRef } from "./objects";
import type { Replacement } from "./replacements";

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/** At most `max` objects are listed (a comment has a size limit); the JSON report has them all. */
export function replacementLines(replacements: readonly Replacement[], max = 20): string[] {
    if (replacements.length === 0) return [];
    const more = replacements.length - max;
    return [
        `#### Replaced, not updated in place (${replacements.length})`,
        "",
        "`pulumi up` deletes and creates these again: a field changed that the kubernetes provider (and, for most of them, the API server) does not update in place.",
        "",
        ...replacements.slice(0, max).map((r) => `- **replace** ${describeRef(r).replace(/[<>|]/g, "")}: ${r.fields.slice(0, 5).map(code).join(", ")}${r.fields.length > 5 ? ` and ${r.fields.length - 5} more fields` : ""}`),
        ...(more > 0 ? [`- … and ${more} more (the JSON report, \`--format json\`, lists every one)`] : []),
        "",
    ];
}
