/**
 * The body of the pull request's offline-diff comment, built from the report the `diff` job
 * uploaded. That report is the output of the pull request's own code (and of its dependencies'
 * install scripts), so it is shown as what it is:
 *
 * - marked: the pipeline's header says whose output it is and that it is no verdict;
 * - inert: the whole report sits in one fenced code block whose fence is longer than any run of
 *   backticks in it, so nothing in it renders as Markdown or HTML, mentions (@user, @org/team),
 *   links, images, issue references or headings; control and bidirectional-override characters
 *   are replaced, so it cannot reorder how it reads either;
 * - bounded: at most MAX_REPORT characters of it (GitHub refuses a comment over 65536 characters,
 *   which made the comment job fail), cut at a line end, with a note saying so.
 *
 *   npm run -s comment:body -- --base <40-hex sha> <report file> <output file>
 */
import * as fs from "fs";
import * as path from "path";

export const MARKER = "<!-- ops-offline-diff -->";
/** GitHub's limit for a comment body, in characters. */
export const GITHUB_COMMENT_LIMIT = 65536;
/** Characters of the report shown; the rest of the body (header, fence, note) stays under 2000. */
export const MAX_REPORT = 60000;

/** C0/C1 controls except tab and newline, and the Unicode bidirectional controls. */
const UNSAFE = /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069]/g;

export function commentBody(report: string, baseSha: string): string {
    if (!/^[0-9a-f]{40}$/.test(baseSha)) throw new Error(`--base ${JSON.stringify(baseSha)}: expected the base commit, 40 lowercase hex digits`);
    // A run of backticks is kept below 16, so the fence stays short whatever the report holds.
    let text = report.replace(/\r\n?/g, "\n").replace(UNSAFE, "\ufffd").replace(/`{16,}/g, "`".repeat(15) + "\ufffd");
    let note = "";
    if (text.length > MAX_REPORT) {
        const cut = text.lastIndexOf("\n", MAX_REPORT);
        const shown = cut > 0 ? cut : MAX_REPORT;
        note = `\n_The report is ${text.length} characters long; the first ${shown} are shown. The whole report is in the summary of the job "offline render and diff"._\n`;
        text = text.slice(0, shown);
    }
    const longest = Math.max(0, ...[...text.matchAll(/`+/g)].map((m) => m[0].length));
    const fence = "`".repeat(Math.max(3, longest + 1));
    return [
        MARKER,
        `## Offline diff of the stacks against \`${baseSha.slice(0, 12)}\``,
        "",
        "_Below is the output of this pull request's own code (`npm run diff` and `npm run images:lock` in the job \"offline render and diff\", rendered offline: no cluster, no credentials; secret values redacted), shown as plain text. Nothing in it is a verdict of the pipeline: the checks' results are on the Checks tab._",
        "",
        `${fence}text`,
        text.replace(/\n+$/, ""),
        fence,
        note,
    ].join("\n");
}

function main(argv: string[]): number {
    const i = argv.indexOf("--base");
    const base = i >= 0 ? argv[i + 1] : undefined;
    const files = argv.filter((_, j) => i < 0 || (j !== i && j !== i + 1));
    if (!base || files.length !== 2) {
        console.error("usage: comment-body.ts --base <sha> <report file> <output file>");
        return 2;
    }
    const [input, output] = files;
    try {
        const body = commentBody(fs.readFileSync(input, "utf8"), base);
        if (body.length > GITHUB_COMMENT_LIMIT) throw new Error(`the body is ${body.length} characters, over GitHub's ${GITHUB_COMMENT_LIMIT}`);
        const tmp = path.join(path.dirname(output), `.${path.basename(output)}.tmp`);
        fs.writeFileSync(tmp, body);
        fs.renameSync(tmp, output);
        return 0;
    } catch (e) {
        console.error(`::error::${input}: ${(e as Error).message}`);
        return 1;
    }
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
