/**
 * npm run render -- --stack dev [--out DIR]
 * Runs index.ts under the Pulumi SDK's mock runtime with Pulumi.<stack>.yaml and writes
 * DIR/manifests.yaml and DIR/resources.json (default DIR: out/<stack>), plus the files the program
 * exports as `renderedFiles` (e.g. DIR/node/kubelet-config.yaml); exit 0 only for a valid stack
 * that the policy pack (policies/config/<stack>.json) evaluates without a mandatory violation.
 */
import * as path from "path";
import { packVerdict } from "../policies/pack/render";
import { prepareOutput, publishRender } from "./harness/output";
import { render, summary } from "./harness/render";
import { listStacks, REPO_ROOT } from "./harness/stackConfig";

function parseArgs(argv: string[]): { stack: string; out?: string } {
    const args: Record<string, string> = {};
    for (let i = 0; i < argv.length; i++) {
        const m = /^--(stack|out)(?:=(.*))?$/.exec(argv[i]);
        if (!m) throw new Error(`unknown argument ${argv[i]}; usage: npm run render -- --stack <${listStacks().join("|")}> [--out DIR]`);
        args[m[1]] = m[2] ?? argv[++i];
        if (args[m[1]] === undefined) throw new Error(`--${m[1]} needs a value`);
    }
    if (!args.stack) throw new Error(`--stack is required: one of ${listStacks().join(", ")}`);
    return { stack: args.stack, out: args.out };
}

async function main() {
    const { stack, out } = parseArgs(process.argv.slice(2));
    const outDir = path.resolve(out ?? path.join(REPO_ROOT, "out", stack));
    const release = prepareOutput(outDir); // fails at once on a bad --out or a render already writing there
    try {
        const result = await render(stack);
        const pack = packVerdict(result);
        console.log(summary(result, [pack.text]));
        // Writes only a render without errors, atomically; otherwise the previous output stays.
        // A render the policy pack refuses is still written (to read what it refuses) but fails.
        const published = publishRender(result, outDir, undefined, { lockHeld: true });
        (published.written ? console.log : console.error)(published.message);
        process.exitCode = published.written && pack.ok ? 0 : 1;
    } finally {
        release();
    }
}

main().catch((err) => {
    console.error(`render failed: ${err instanceof Error ? err.message : err}`);
    process.exitCode = 2;
});
