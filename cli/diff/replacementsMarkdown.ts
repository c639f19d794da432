/** The replacements of a stack diff (replacements.ts) as Markdown lines for the pull-request comment. */
import { describeRef } from "./objects";
import type { Replacement } from "./replacements";

const code = (s: string) => `\`${s.replace(/`/g, "'")}\``;

/**
 * A StatefulSet whose volume claim templates change: what the explain comparison (cli/explain/
 * volumes.ts) says the change does, a growth (claims expanded in place, the StatefulSet re-created
 * around its pods) or a refusal (a shrink, a class change, a StatefulSet not made to grow); the
 * same words `npm run explain` prints. Without such a sentence (the explain comparison did not
 * run) the change is only named.
 */
export function claimTemplateLines(replacements: readonly Replacement[], volumeTexts: readonly string[] = []): string[] {
    const hit = replacements.filter((r) => r.kind === "StatefulSet" && r.fields.some((f) => f.startsWith("spec.volumeClaimTemplates")));
    return hit.flatMap((r) => {
        const id = `${r.namespace}/${r.name}`;
        const said = volumeTexts.filter((t) => ["", "refused: ", "no change: "].some((p) => t.startsWith(`${p}${id}: `)));
        const name = describeRef(r).replace(/[<>|]/g, "");
        if (said.length === 0) return [`> **The volume claim templates of ${name} change**: see "What changes on the cluster" (npm run explain); docs/e2e.md, "Growing a data volume".`];
        return said.map((t) => (t.startsWith("refused: ")
            ? `> **Refused: the volume claim templates of ${name}.** ${t.slice("refused: ".length)}`
            : t.startsWith("no change: ")
              ? `> **No change to the volumes of ${name}.** ${t.slice("no change: ".length)}`
              : `> **Volume growth of ${name}.** ${t}`));
    });
}

/** At most `max` objects are listed (a comment has a size limit); the JSON report has them all. */
export function replacementLines(replacements: readonly Replacement[], max = 20, volumeTexts: readonly string[] = []): string[] {
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
        ...claimTemplateLines(replacements, volumeTexts).flatMap((l) => [l, ""]),
    ];
}
