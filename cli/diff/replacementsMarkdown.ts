/** The replacements of a stack diff (replacements.ts) as Markdown lines for the pull-request comment. */
import { describeRef } from "./objects";
import type { Replacement } from "./replacements";

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/**
 * A StatefulSet whose volume claim templates change (a volume grown, a class changed): provider
 * 4.25.0 cannot preview its replacement (the dry-run apply under the same name is refused,
 * pulumi-kubernetes#4328), and a replaced StatefulSet keeps its claims (retention Retain) at their
 * old size. Said in the comment rather than discovered by a failing preview.
 */
export function claimTemplateLines(replacements: readonly Replacement[]): string[] {
    const hit = replacements.filter((r) => r.kind === "StatefulSet" && r.fields.some((f) => f.startsWith("spec.volumeClaimTemplates")));
    return hit.map((r) =>
        `> **The volume claim templates of ${describeRef(r).replace(/[<>|]/g, "")}: not supported yet.** \`pulumi preview\` fails on this replacement with kubernetes provider 4.25.0 (pulumi-kubernetes#4328), and even replaced, the StatefulSet's existing claims keep their size (retention Retain): nothing grows. See docs/e2e.md, "Growing a data volume".`);
}

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
        ...claimTemplateLines(replacements).flatMap((l) => [l, ""]),
    ];
}
