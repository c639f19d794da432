/**
 * npm run render -- --stack dev [--out DIR] [--previous EARLIER]
 * Runs index.ts under the Pulumi SDK's mock runtime with Pulumi.<stack>.yaml and writes
 * DIR/manifests.yaml and DIR/resources.json (default DIR: out/<stack>), plus the files the program
 * exports as `renderedFiles` (e.g. DIR/node/kubelet-config.yaml); exit 0 only for a valid stack
 * that the policy pack (policies/config/<stack>.json) evaluates without a mandatory violation.
 * DIR must be new, empty, or a previous render's folder (./harness/output.ts); the last line says
 * "render ok" or "render failed: <why>". EARLIER: the output folder of an earlier render of the
 * same stack (read before anything is written, so it may be DIR itself): the pack then judges each
 * object new since then as a creation, each changed one as an update with its old object and each
 * unchanged one as Gatekeeper's audit does (./harness/earlierRender.ts); without it, every object
 * as a creation.
 */
import * as path from "path";
import { packVerdict, stackResourcesOf } from "../policies/pack/render";
import { redactSecretShapes } from "../policies/pack/secretPatterns";
import { earlierState, earlierStateLine, readEarlierRender } from "./harness/earlierRender";
import { prepareOutput, publishRender } from "./harness/output";
import { render, summary } from "./harness/render";
import { stackNameProblem } from "../config/stacks";
import { listStacks, REPO_ROOT } from "./harness/stackConfig";

export function parseArgs(argv: string[]): { stack: string; out?: string; previous?: string } {
    const usage = `usage: npm run render -- --stack <${listStacks().join("|")}> [--out DIR] [--previous EARLIER_RENDER_DIR]`;
    const args: Record<string, string> = {};
    const twice: Record<string, string> = { stack: "render one stack at a time", out: "give one output folder", previous: "give one earlier render" };
    for (let i = 0; i < argv.length; i++) {
        const m = /^--(stack|out|previous)(?:=(.*))?$/.exec(argv[i]);
        if (!m) throw new Error(`unknown argument ${argv[i]}; ${usage}`);
        const value = m[2] ?? argv[++i];
        if (value === undefined) throw new Error(`--${m[1]} needs a value; ${usage}`);
        // An unset shell variable gives an empty argument: it must not mean the current folder.
        if (value.trim() === "") throw new Error(m[1] === "stack" ? `--stack needs a stack name; got an empty value; ${usage}` : `--${m[1]} needs a folder name; got an empty value (an unset variable?)`);
        if (args[m[1]] !== undefined) throw new Error(`--${m[1]} is given twice (${args[m[1]]}, then ${value}); ${twice[m[1]]}; ${usage}`);
        args[m[1]] = value;
    }
    if (!args.stack) throw new Error(`--stack is required: one of ${listStacks().join(", ")}`);
    const problem = stackNameProblem(args.stack);
    if (problem) throw new Error(problem);
    return { stack: args.stack, out: args.out, ...(args.previous !== undefined ? { previous: args.previous } : {}) };
}

/** Everything the render prints goes through this: a secret-shaped value never reaches stdout or stderr. */
const say = (text: string) => console.log(redactSecretShapes(text));
const complain = (text: string) => console.error(redactSecretShapes(text));

/** The last line of a render that could not run (bad arguments, stack file, configuration, output folder). */
export function failureLine(err: unknown): string {
    return redactSecretShapes(`render failed: ${err instanceof Error ? err.message : err}`);
}

async function main() {
    const { stack, out, previous } = parseArgs(process.argv.slice(2));
    const outDir = path.resolve(out ?? path.join(REPO_ROOT, "out", stack));
    // Read (and checked) before anything is written: the earlier render may be the output folder itself.
    const earlier = previous === undefined ? undefined : readEarlierRender(path.resolve(previous), stack);
    const release = prepareOutput(outDir); // fails at once on a bad --out or a render already writing there
    try {
        const result = await render(stack);
        const before = earlier && earlierState(result.records, stackResourcesOf(result), earlier);
        const pack = packVerdict(result, stack, before);
        const sections = earlier ? [earlierStateLine(path.join(previous!, "resources.json"), result.records, earlier), pack.text] : [pack.text];
        say(summary(result, sections));
        // Writes only a render without errors, atomically; otherwise the previous output stays.
        // A render the policy pack refuses is still written (to read what it refuses) but fails.
        const published = publishRender(result, outDir, undefined, { lockHeld: true });
        (published.written ? say : complain)(published.message);
        if (published.written && pack.ok) say("render ok");
        else if (published.written) complain("render failed: the policy pack blocks the stack (see above); the files were written to read what it refuses");
        process.exitCode = published.written && pack.ok ? 0 : 1;
    } finally {
        release();
    }
}

if (require.main === module) {
    main().catch((err) => {
        console.error(failureLine(err));
        process.exitCode = 2;
    });
}
