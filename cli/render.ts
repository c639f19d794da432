/**
 * npm run render -- --stack dev [--out DIR]
 * Runs index.ts under the Pulumi SDK's mock runtime with Pulumi.<stack>.yaml and writes
 * DIR/manifests.yaml and DIR/resources.json (default DIR: out/<stack>), plus the files the program
 * exports as `renderedFiles` (e.g. DIR/node/kubelet-config.yaml); exit 0 only for a valid stack
 * that the policy pack (policies/config/<stack>.json) evaluates without a mandatory violation.
 * DIR must be new, empty, or a previous render's folder (./harness/output.ts); the last line says
 * "render ok" or "render failed: <why>".
 */
import * as path from "path";
import { packVerdict } from "../policies/pack/render";
import { redactSecretShapes } from "../policies/pack/secretPatterns";
import { prepareOutput, publishRender } from "./harness/output";
import { render, summary } from "./harness/render";
import { stackNameProblem } from "../config/stacks";
import { listStacks, REPO_ROOT } from "./harness/stackConfig";

export function parseArgs(argv: string[]): { stack: string; out?: string } {
    const usage = `usage: npm run render -- --stack <${listStacks().join("|")}> [--out DIR]`;
    const args: Record<string, string> = {};
    for (let i = 0; i < argv.length; i++) {
        const m = /^--(stack|out)(?:=(.*))?$/.exec(argv[i]);
        if (!m) throw new Error(`unknown argument ${argv[i]}; ${usage}`);
        const value = m[2] ?? argv[++i];
        if (value === undefined) throw new Error(`--${m[1]} needs a value; ${usage}`);
        // An unset shell variable gives an empty argument: it must not mean the current folder.
        if (value.trim() === "") throw new Error(m[1] === "out" ? "--out needs a folder name; got an empty value (an unset variable?)" : `--stack needs a stack name; got an empty value; ${usage}`);
        if (args[m[1]] !== undefined) throw new Error(`--${m[1]} is given twice (${args[m[1]]}, then ${value}); ${m[1] === "stack" ? "render one stack at a time" : "give one output folder"}; ${usage}`);
        args[m[1]] = value;
    }
    if (!args.stack) throw new Error(`--stack is required: one of ${listStacks().join(", ")}`);
    const problem = stackNameProblem(args.stack);
    if (problem) throw new Error(problem);
    return { stack: args.stack, out: args.out };
}

/** Everything the render prints goes through this: a secret-shaped value never reaches stdout or stderr. */
const say = (text: string) => console.log(redactSecretShapes(text));
const complain = (text: string) => console.error(redactSecretShapes(text));

/** The last line of a render that could not run (bad arguments, stack file, configuration, output folder). */
export function failureLine(err: unknown): string {
    return redactSecretShapes(`render failed: ${err instanceof Error ? err.message : err}`);
}

async function main() {
    const { stack, out } = parseArgs(process.argv.slice(2));
    const outDir = path.resolve(out ?? path.join(REPO_ROOT, "out", stack));
    const release = prepareOutput(outDir); // fails at once on a bad --out or a render already writing there
    try {
        const result = await render(stack);
        const pack = packVerdict(result);
        say(summary(result, [pack.text]));
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
