/**
 * The diff of a stack as Markdown for a pull-request comment: a summary line, a table of added,
 * removed and changed objects, a collapsible field-level diff per changed object, and the policy
 * results that appeared or disappeared. Long reports are cut to fit a comment (GitHub refuses
 * comments above 65536 characters; a comment may hold several stacks).
 */
import { describeRef, FieldChange, ObjectRef } from "./objects";
import type { PolicyFinding } from "./policy";
import type { StackDiffReport } from "./report";
import { mermaidFlows } from "./explain";
import { replacementLines } from "./replacementsMarkdown";

export interface MarkdownOptions {
    /** Upper bound of the text length; field diffs are left out beyond it. */
    maxChars?: number;
    /** Longest value shown in a field diff before it is cut. */
    maxValueChars?: number;
}

const DEFAULTS: Required<MarkdownOptions> = { maxChars: 30000, maxValueChars: 200 };

/** Free text (messages, paths in summaries) must not open HTML tags or break table cells. */
const escapeText = (s: string) => s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const cell = (s: string | undefined) => (s ? escapeText(s).replace(/\|/g, "\\|") : "");

function formatValue(v: unknown, max: number): string {
    const text = JSON.stringify(v) ?? "undefined";
    return text.length > max ? `${text.slice(0, max)}… (${text.length} chars)` : text;
}

/** A code fence longer than any backtick run in the content, so values cannot close it. */
function fenced(lines: string[], lang = ""): string {
    const longest = Math.max(2, ...lines.map((l) => Math.max(0, ...(l.match(/`+/g) ?? []).map((r) => r.length))));
    const fence = "`".repeat(longest + 1);
    return [`${fence}${lang}`, ...lines, fence].join("\n");
}

export function fieldChangeLines(change: FieldChange, maxValueChars: number): { lang: string; lines: string[] } {
    if (change.type === "text") return { lang: "diff", lines: [`# ${change.path}`, ...change.lines] };
    const old = "old" in change ? formatValue(change.old, maxValueChars) : "(absent)";
    const cur = "new" in change ? formatValue(change.new, maxValueChars) : "(absent)";
    return { lang: "", lines: [`${change.path}: ${old} -> ${cur}`] };
}

/** Consecutive scalar changes share one code block; each text diff gets its own diff block. */
function changeBlocks(changes: FieldChange[], maxValueChars: number): string {
    const blocks: string[] = [];
    let values: string[] = [];
    const flush = () => {
        if (values.length > 0) blocks.push(fenced(values));
        values = [];
    };
    for (const c of changes) {
        const { lang, lines } = fieldChangeLines(c, maxValueChars);
        if (lang === "diff") {
            flush();
            blocks.push(fenced(lines, "diff"));
        } else values.push(...lines);
    }
    flush();
    return blocks.join("\n\n");
}

const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;

function summaryLine(r: StackDiffReport): string {
    const o = r.objects;
    const counts = `${o.added.length} added, ${o.removed.length} removed, ${o.changed.length} changed`;
    const removed = r.constraints?.removed.length ?? 0;
    return `### Stack \`${r.stack}\`: ${counts}${removed > 0 ? `; :warning: ${plural(removed, "constraint")} removed` : ""}`;
}

function findingLine(f: PolicyFinding): string {
    return `- **${cell(f.enforcementLevel)}** \`${cell(f.policy)}\` on ${cell(f.object)}: ${escapeText(f.message)}`;
}

export function renderMarkdown(r: StackDiffReport, options: MarkdownOptions = {}): string {
    const opts = { ...DEFAULTS, ...options };
    const head: string[] = [summaryLine(r), ""];
    const baseName = r.base.commit ? `\`${r.base.ref}\` (\`${r.base.commit.slice(0, 12)}\`)` : `\`${r.base.ref}\``;
    head.push(`Base ${baseName} → ${r.head.commit ? `\`${r.head.commit.slice(0, 12)}\`` : r.head.ref}. ${plural(r.objects.unchangedCount, "object")} unchanged. Secret values are redacted on both sides.`, "");
    for (const note of r.notes) head.push(`> **Note:** ${escapeText(note)}`, "");
    for (const [side, info] of [["base", r.base], ["head", r.head]] as const) {
        if (info.problems.length === 0) continue;
        head.push(`<details><summary>The ${side} render reported ${plural(info.problems.length, "problem")}</summary>`, "");
        head.push(...info.problems.map((p) => `- ${escapeText(p)}`), "", "</details>", "");
    }

    const o = r.objects;
    const rows: Array<[string, ObjectRef]> = [...o.added.map((x) => ["added", x] as [string, ObjectRef]), ...o.removed.map((x) => ["removed", x] as [string, ObjectRef]), ...o.changed.map((x) => ["changed", x] as [string, ObjectRef])];
    if (rows.length === 0) head.push("No changes to Kubernetes objects.", "");
    else {
        head.push("| Change | Kind | Namespace | Name |", "|---|---|---|---|");
        for (const [change, ref] of rows) head.push(`| ${change} | ${cell(ref.kind)} | ${cell(ref.namespace)} | ${cell(ref.name)} |`);
        head.push("");
    }
    head.push(...constraintLines(r));
    head.push(...replacementLines(r.replacements ?? [], 20, r.explain?.available ? r.explain.changes.filter((c) => c.area === "volumes").map((c) => c.text) : []));

    head.push(...explainSection(r));

    const policy: string[] = ["#### Policy results", ""];
    if (!r.policy.available) policy.push(r.policy.error ? `**Error**: ${escapeText(r.policy.reason)}` : `Not evaluated: ${escapeText(r.policy.reason)}.`);
    else if (r.policy.appeared.length + r.policy.disappeared.length === 0) policy.push(`No policy result appeared or disappeared (${plural(r.policy.unchangedCount, "result")} unchanged).`);
    else {
        if (r.policy.appeared.length > 0) policy.push(`Appeared (${r.policy.appeared.length}):`, "", ...r.policy.appeared.map(findingLine), "");
        if (r.policy.disappeared.length > 0) policy.push(`Disappeared (${r.policy.disappeared.length}):`, "", ...r.policy.disappeared.map(findingLine), "");
    }
    const policyText = policy.join("\n").trimEnd() + "\n";

    // Field diffs fill what the budget leaves after the summary, the table and the policy results.
    let text = head.join("\n") + "\n";
    const details: string[] = [];
    let budget = opts.maxChars - text.length - policyText.length - 200;
    let omitted = 0;
    for (const c of o.changed) {
        const block = [`<details><summary>${cell(describeRef(c))}: ${plural(c.changes.length, "field")}</summary>`, "", changeBlocks(c.changes, opts.maxValueChars), "", "</details>", ""].join("\n");
        if (block.length > budget) {
            omitted++;
            continue;
        }
        budget -= block.length;
        details.push(block);
    }
    if (o.changed.length > 0) {
        text += ["#### Changed fields", "", ...details].join("\n");
        if (omitted > 0) text += `\n_${plural(omitted, "field diff")} left out to fit a comment: run \`npm run diff -- --stack ${r.stack} --base ${r.base.commit ?? r.base.ref} --format json\` for everything._\n\n`;
    }
    return `${text.trimEnd()}\n\n${policyText}`;
}

/** The Gatekeeper constraints the change removes, adds or enforces differently. */
function constraintLines(r: StackDiffReport): string[] {
    const c = r.constraints;
    if (!c || c.removed.length + c.added.length + c.changed.length === 0) return [];
    const list = (title: string, xs: string[]) => (xs.length > 0 ? [`${title} (${xs.length}):`, "", ...xs.map((x) => `- \`${x}\``), ""] : []);
    return ["#### Gatekeeper constraints", "", ...list("Removed", c.removed), ...list("Enforced differently", c.changed), ...list("Added", c.added)];
}

/** What the change does on the cluster: the explain changes, and the reachability changes as a Mermaid diagram. */
export function explainSection(r: StackDiffReport): string[] {
    const e = r.explain;
    if (!e) return [];
    const out = ["#### What changes on the cluster", ""];
    if (!e.available) return [...out, `Not explained: ${escapeText(e.reason)}.`, ""];
    for (const note of e.notes) out.push(`> ${escapeText(note)}`, "");
    if (e.changes.length === 0) return [...out, "No change to QoS classes, control-group values, capacity, reachability, autoscaling, rollouts, data volumes or names.", ""];
    out.push(...e.changes.map((c) => `- **${c.area}**: ${escapeText(c.text)}`), "");
    const diagram = mermaidFlows(e.flows);
    if (diagram.length > 0) out.push(fenced(diagram, "mermaid"), "");
    return out;
}

export function renderFailureMarkdown(stack: string, error: string): string {
    return [`### Stack \`${stack}\`: not diffed`, "", `:warning: ${escapeText(error)}`, ""].join("\n");
}
