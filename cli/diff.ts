/**
 * npm run diff -- --stack prod [--stack dev ...] --base <git-ref> [--format markdown|json]
 *
 * Renders each stack at the base revision (a temporary git worktree, rendered by that revision's
 * own render tool) and in the working tree (the offline render), and prints what changed:
 * objects added, removed and changed with a field-level diff, and the policy results that
 * appeared or disappeared. Offline: no cluster, no pulumi CLI, no credentials, secrets redacted.
 *
 * Exit status: 0 when every stack was diffed (whatever changed); 2 when a side could not be
 * rendered at all or the arguments are wrong.
 */
import * as fs from "fs";
import * as path from "path";
import { render } from "./harness/render";
import { stackNameProblem } from "../config/stacks";
import { listStacks, REPO_ROOT } from "./harness/stackConfig";
import { constraintEntries, diffConstraints } from "./diff/constraints";
import { renderJson } from "./diff/json";
import { renderFailureMarkdown, renderMarkdown } from "./diff/markdown";
import { loadPolicyEvaluator, PolicyEvaluator } from "./diff/policy";
import { buildReport, RenderedSide, StackDiffReport } from "./diff/report";
import { renderEntry, renderRevision, resolveCommit, withWorktree } from "./diff/worktree";

export type Format = "markdown" | "json";

export interface DiffArgs {
    stacks: string[];
    base: string;
    format: Format;
}

export interface StackFailure {
    stack: string;
    error: string;
}

export interface DiffOutcome {
    reports: StackDiffReport[];
    failures: StackFailure[];
}

const USAGE = "usage: npm run diff -- --stack <stack> [--stack <stack> ...] --base <git-ref> [--format markdown|json]";

export function parseArgs(argv: string[]): DiffArgs {
    const stacks: string[] = [];
    let base: string | undefined;
    let format: Format = "markdown";
    const given = new Set<string>();
    for (let i = 0; i < argv.length; i++) {
        const m = /^--(stack|base|format)(?:=(.*))?$/.exec(argv[i]);
        if (!m) throw new Error(`unknown argument ${argv[i]}; ${USAGE}`);
        if (m[1] !== "stack" && given.has(m[1])) throw new Error(`--${m[1]} is given twice; ${USAGE}`);
        const value = m[2] ?? argv[++i];
        if (value === undefined || value === "") throw new Error(`--${m[1]} needs a value; ${USAGE}`);
        if (m[1] === "stack") {
            const problem = stackNameProblem(value);
            if (problem) throw new Error(`${problem}; ${USAGE}`);
            if (stacks.includes(value)) throw new Error(`--stack ${value} is given twice; ${USAGE}`);
            stacks.push(value);
        } else if (m[1] === "base") base = value;
        else if (value === "markdown" || value === "json") format = value;
        else throw new Error(`--format must be markdown or json, not ${value}`);
        given.add(m[1]);
    }
    if (stacks.length === 0) throw new Error(`--stack is required (one of ${listStacks().join(", ")}); ${USAGE}`);
    if (!base) throw new Error(`--base is required (a branch, tag or commit); ${USAGE}`);
    return { stacks, base, format };
}

async function headSide(stack: string): Promise<RenderedSide | StackFailure> {
    try {
        const result = await render(stack);
        if (result.redactedObjects.length === 0 && result.errors.length > 0) return { stack, error: `the working tree could not be rendered: ${result.errors.join("; ")}` };
        // The same redacted records as the base's resources.json, so both sides are judged alike.
        const resources = result.records.map((r) => ({ type: r.type, urn: r.urn, name: r.name, props: (r.inputs ?? {}) as Record<string, any> }));
        return { info: { ref: "working tree", problems: result.errors }, objects: result.redactedObjects, resources, files: result.files };
    } catch (err) {
        return { stack, error: `the working tree could not be rendered: ${err instanceof Error ? err.message : String(err)}` };
    }
}

async function baseSide(dir: string, ref: string, commit: string, stack: string, notes: string[]): Promise<RenderedSide | StackFailure> {
    const info = { ref, commit, problems: [] as string[] };
    if (renderEntry(dir) && !fs.existsSync(path.join(dir, `Pulumi.${stack}.yaml`))) {
        notes.push(`the base revision has no stack ${stack} (no Pulumi.${stack}.yaml): every object is new`);
        return { info, objects: [], resources: [], absent: true };
    }
    const rendered = await renderRevision(dir, stack);
    if (!rendered.rendered) return { stack, error: `the base revision ${ref} (${commit.slice(0, 12)}) could not be rendered: ${rendered.reason}` };
    if (rendered.objects.length === 0 && rendered.problems.length > 0) return { stack, error: `the base revision ${ref} (${commit.slice(0, 12)}) could not be rendered: ${rendered.problems.join("; ")}` };
    return { info: { ...info, problems: rendered.problems }, objects: rendered.objects, resources: rendered.resources, files: rendered.files };
}

const isFailure = (x: RenderedSide | StackFailure): x is StackFailure => "error" in x;

/**
 * A revision's in-process policy evaluation. The base's failing to load is a note (the head's pack
 * judges both sides); the working tree's failing to load is an error of every stack's report.
 */
async function safeEvaluator(root: string, notes: string[], side: "head" | "base"): Promise<PolicyEvaluator | undefined> {
    try {
        return await loadPolicyEvaluator(root);
    } catch (err) {
        const message = err instanceof Error ? err.message : String(err);
        if (side === "base") {
            notes.push(`the policy evaluation of the base revision could not be loaded: ${message}`);
            return undefined;
        }
        return () => {
            throw new Error(`the policy pack could not be loaded: ${message}`);
        };
    }
}

/** The diff of every stack; `repo` is the repository whose working tree is the head side. */
export async function runDiff(args: DiffArgs, repo = REPO_ROOT): Promise<DiffOutcome> {
    const commit = resolveCommit(repo, args.base);
    const loadNotes: string[] = [];
    const headEvaluator = await safeEvaluator(repo, loadNotes, "head");
    return withWorktree(repo, commit, async (dir) => {
        const baseEvaluator = await safeEvaluator(dir, loadNotes, "base");
        const outcome: DiffOutcome = { reports: [], failures: [] };
        for (const stack of args.stacks) {
            const notes = [...loadNotes];
            const head = await headSide(stack);
            if (isFailure(head)) {
                outcome.failures.push(head);
                continue;
            }
            const base = await baseSide(dir, args.base, commit, stack, notes);
            if (isFailure(base)) {
                outcome.failures.push(base);
                continue;
            }
            const constraints = diffConstraints(constraintEntries(dir, stack), constraintEntries(repo, stack));
            outcome.reports.push(await buildReport(stack, base, head, { base: baseEvaluator, head: headEvaluator }, notes, constraints));
        }
        return outcome;
    });
}

export function formatOutcome(outcome: DiffOutcome, format: Format): string {
    if (format === "json") return renderJson(outcome.reports, outcome.failures);
    const perStack = Math.floor(60000 / Math.max(1, outcome.reports.length + outcome.failures.length));
    return [...outcome.failures.map((f) => renderFailureMarkdown(f.stack, f.error)), ...outcome.reports.map((r) => renderMarkdown(r, { maxChars: perStack }))].join("\n");
}

async function main() {
    let args: DiffArgs;
    try {
        args = parseArgs(process.argv.slice(2));
    } catch (err) {
        console.error(err instanceof Error ? err.message : String(err));
        process.exitCode = 2;
        return;
    }
    // Only the report goes to stdout (JSON must parse as printed): anything else the renders or
    // the policy pack print while the diff runs goes to stderr.
    const write = process.stdout.write.bind(process.stdout);
    process.stdout.write = process.stderr.write.bind(process.stderr) as typeof process.stdout.write;
    let outcome: DiffOutcome;
    try {
        outcome = await runDiff(args);
    } finally {
        process.stdout.write = write;
    }
    write(formatOutcome(outcome, args.format));
    for (const f of outcome.failures) console.error(`diff ${f.stack}: ${f.error}`);
    const packErrors = outcome.reports.filter((r) => !r.policy.available && r.policy.error);
    for (const r of packErrors) if (!r.policy.available) console.error(`diff ${r.stack}: ${r.policy.reason}`);
    process.exitCode = outcome.failures.length > 0 || packErrors.length > 0 ? 2 : 0;
}

if (require.main === module) {
    main().catch((err) => {
        console.error(`diff failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 2;
    });
}
