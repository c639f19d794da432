/** The replacements of a stack diff (replacements.ts) as Markdown lines for the pull-request comment. */
import { describeRef } from "./objects";
import type { Replacement } from "./replacements";

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

export function replacementLines(replacements: readonly Replacement[]): string[] {
    if (replacements.length === 0) return [];
    return [
        `#### Replaced, not updated in place (${replacements.length})`,
        "",
        "`pulumi up` deletes and creates these again: a field changed that the kubernetes provider (and, for most of them, the API server) does not update in place.",
        "",
        ...replacements.map((r) => `- **replace** ${describeRef(r).replace(/[<>|]/g, "")}: ${r.fields.map(code).join(", ")}`),
        "",
    ];
}
