/**
 * npm run explain -- --stack prod [--format md|json]
 * What a stack will do on the cluster, from the same offline render as `npm run render`: QoS and
 * control-group values, capacity, reachability against the declared flows, autoscaling, rollout
 * and drain bounds, stable names (specification sections 2.1 to 2.6 and 3). Exit 0 when explained;
 * 1 when the render reported problems (the report is printed anyway); 2 on bad arguments or no render.
 */
import { stackNameProblem } from "../config/stacks";
import { render, RenderResult } from "./harness/render";
import { listStacks } from "./harness/stackConfig";
import { explain, ExplainReport } from "./explain/index";
import { addonReleases } from "./explain/addonPods";
import { explainJson, explainMarkdown } from "./explain/format";

export type ExplainFormat = "md" | "json";

const USAGE = () => `usage: npm run explain -- --stack <${listStacks().join("|")}> [--format md|json]`;

export function parseExplainArgs(argv: string[]): { stack: string; format: ExplainFormat } {
    let stack: string | undefined;
    let format: ExplainFormat = "md";
    const given = new Set<string>();
    for (let i = 0; i < argv.length; i++) {
        const m = /^--(stack|format)(?:=(.*))?$/.exec(argv[i]);
        if (!m) throw new Error(`unknown argument ${argv[i]}; ${USAGE()}`);
        const value = m[2] ?? argv[++i];
        if (value === undefined || value === "") throw new Error(`--${m[1]} needs a value; ${USAGE()}`);
        if (given.has(m[1])) throw new Error(`--${m[1]} is given twice; ${USAGE()}`);
        given.add(m[1]);
        if (m[1] === "stack") stack = value;
        else if (value === "md" || value === "json") format = value;
        else throw new Error(`--format must be md or json, not ${value}`);
    }
    if (!stack) throw new Error(`--stack is required; ${USAGE()}`);
    const problem = stackNameProblem(stack);
    if (problem) throw new Error(problem);
    return { stack, format };
}

/** The explain report of a render (the redacted objects: nothing secret is needed or printed). */
export function explainRender(result: RenderResult): ExplainReport {
    return explain({ stack: result.stack, objects: result.redactedObjects, files: result.files, releases: addonReleases(result.resources) });
}

async function main() {
    let args: { stack: string; format: ExplainFormat };
    try {
        args = parseExplainArgs(process.argv.slice(2));
    } catch (err) {
        console.error(err instanceof Error ? err.message : String(err));
        process.exitCode = 2;
        return;
    }
    const result = await render(args.stack);
    if (result.redactedObjects.length === 0) {
        console.error(`explain ${args.stack}: the render produced no objects: ${result.errors.join("; ")}`);
        process.exitCode = 2;
        return;
    }
    const report = explainRender(result);
    process.stdout.write(args.format === "json" ? explainJson(report) : explainMarkdown(report));
    for (const e of result.errors) console.error(`render problem: ${e}`);
    process.exitCode = result.errors.length > 0 ? 1 : 0;
}

if (require.main === module) {
    main().catch((err) => {
        console.error(`explain failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exitCode = 2;
    });
}
