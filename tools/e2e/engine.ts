/**
 * The e2e's pulumi steps: the real pulumi CLI (on PATH) runs the real program through the
 * Automation API with an inline program (main.ts's main(), served in this process: the Node.js
 * language host is not needed), in the project folder tools/e2e/run.sh prepares (the repository's
 * files through links, Pulumi.yaml the real one, a copy of the stack file the CLI may write).
 *
 *   tsx tools/e2e/engine.ts <up|preview|refresh|destroy> --dir <project> --stack <stack> [--json <out>]
 *       [--refresh] [--expect-no-changes] [--config-file <file>] [--policy-pack <dir> --policy-pack-config <file>]
 *       [--program hooks --chart-repo <url> --values <json>] [--program floor --objects <dir>]
 *       [--parallel <n>] [--skip-checkpoints]
 *
 * Prints the engine's output to stdout and, with --json, writes the steps it took (operation per
 * resource, for Kubernetes objects their kind/namespace/name), the change summary, the policy
 * violations, the duration, and how long the engine's steps took per resource type (from the
 * engine's events: a step's time runs from its pre-event to its outputs or failure event).
 * Exit status: 0 when the operation succeeded; 1 otherwise (an --expect-no-changes preview with
 * changes included).
 *
 * Engine levers (docs/e2e.md, "What each lever saved"): --parallel n is the CLI's --parallel (how
 * many steps are in flight; without it the CLI's default); --skip-checkpoints sets
 * PULUMI_SKIP_CHECKPOINTS=true for the CLI: the file backend then writes the state once at the end
 * instead of after every step, and a crash in the middle loses the record of what was done.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as k8s from "@pulumi/kubernetes";
import { LocalWorkspace, type EngineEvent, type OpType } from "@pulumi/pulumi/automation";
import { main } from "../../main";
import { StepClock, type StepTimes } from "./stepClock";

export interface EngineStep {
    op: OpType;
    urn: string;
    type: string;
    /** For Kubernetes objects: "Kind namespace/name" (from the step's inputs). */
    object?: string;
    /** The properties whose change forces the replacement, as the provider named them. */
    keys?: string[];
}

export interface EngineReport {
    operation: string;
    stack: string;
    ok: boolean;
    error?: string;
    seconds: number;
    /** From the engine's first event to its summary: the operation without the Automation API's CLI calls around it. */
    engineSeconds?: number;
    /** CPU seconds (user + system) of this process: the program and the Automation API, not the CLI or the providers. */
    programCpuSeconds?: number;
    /** Per resource type, longest total first. */
    stepTimes: StepTimes[];
    summary: Record<string, number>;
    steps: EngineStep[];
    policyViolations: { policy: string; level: string; message: string; urn?: string }[];
}

interface Args {
    op: "up" | "preview" | "refresh" | "destroy";
    dir: string;
    stack: string;
    json?: string;
    refresh: boolean;
    expectNoChanges: boolean;
    configFile?: string;
    policyPack?: string;
    policyPackConfig?: string;
    program: "ops" | "hooks" | "floor";
    /** For --program floor: the folder with the render's namespaces.json and objects.json (cli.ts lists). */
    objects?: string;
    chartRepo?: string;
    values?: string;
    parallel?: number;
    skipCheckpoints: boolean;
}

function parseArgs(argv: string[]): Args {
    const [op, ...rest] = argv;
    if (!["up", "preview", "refresh", "destroy"].includes(op)) throw new Error(`usage: engine.ts <up|preview|refresh|destroy> --dir <project> --stack <stack> ... (got "${op}")`);
    const a: Args = { op: op as Args["op"], dir: "", stack: "", refresh: false, expectNoChanges: false, program: "ops", skipCheckpoints: false };
    for (let i = 0; i < rest.length; i++) {
        const flag = rest[i];
        const value = () => {
            const v = rest[++i];
            if (v === undefined) throw new Error(`${flag} needs a value`);
            return v;
        };
        if (flag === "--dir") a.dir = value();
        else if (flag === "--stack") a.stack = value();
        else if (flag === "--json") a.json = value();
        else if (flag === "--refresh") a.refresh = true;
        else if (flag === "--expect-no-changes") a.expectNoChanges = true;
        else if (flag === "--config-file") a.configFile = value();
        else if (flag === "--policy-pack") a.policyPack = value();
        else if (flag === "--policy-pack-config") a.policyPackConfig = value();
        else if (flag === "--program") a.program = value() as Args["program"];
        else if (flag === "--chart-repo") a.chartRepo = value();
        else if (flag === "--objects") a.objects = value();
        else if (flag === "--values") a.values = value();
        else if (flag === "--parallel") a.parallel = Number(value());
        else if (flag === "--skip-checkpoints") a.skipCheckpoints = true;
        else throw new Error(`unknown argument ${flag}`);
    }
    if (!a.dir || !a.stack) throw new Error("--dir and --stack are required");
    if (!["ops", "hooks", "floor"].includes(a.program)) throw new Error(`--program must be ops, hooks or floor, not ${a.program}`);
    if (a.program === "floor" && !a.objects) throw new Error("--program floor needs --objects <folder with namespaces.json and objects.json>");
    if (a.parallel !== undefined && !(Number.isInteger(a.parallel) && a.parallel > 0)) throw new Error(`--parallel must be a whole number above 0 (steps in flight), not ${a.parallel}`);
    return a;
}

/**
 * The chart-hook check (step 6): one helm.v3.Release of the small chart tools/e2e/charts/hooked
 * from the loopback chart repository, the path the add-ons take (components/platform/addons.ts).
 */
function hooksProgram(repo: string, values: Record<string, unknown>) {
    return async () => {
        const release = new k8s.helm.v3.Release("hooked", {
            name: "hooked",
            namespace: "e2e-hooks",
            createNamespace: true,
            chart: "hooked",
            version: "0.1.0",
            repositoryOpts: { repo },
            values,
            waitForJobs: true,
            timeout: 300,
        });
        return { status: release.status, revision: release.status.revision };
    };
}

/**
 * The engine's floor (the lever lab's "floor" variant): the render's objects exactly as the fair
 * kubectl converge applies them (namespaces, then everything else), each a resource of the real
 * provider with its default waits, and nothing of the program around them (no components, no
 * dependsOn between applications, no generated secrets, no add-on releases, no transformations).
 * What this costs is what the engine and the provider cost for the same work as kubectl.
 */
function floorProgram(dir: string) {
    // The program's orphan deletion policy (components/lib/claimGrowth.ts) is the engine's annotation, read only on
    // delete: kept, the floor's destroy (the lab's clean-up) waits on claims its orphaned pods still hold.
    const withoutOrphaning = (o: any) => {
        const a = o.metadata?.annotations;
        if (a?.["pulumi.com/deletionPropagationPolicy"] === "orphan") delete a["pulumi.com/deletionPropagationPolicy"];
        return o;
    };
    const list = (file: string) => ((JSON.parse(fs.readFileSync(path.join(dir, file), "utf8")).items ?? []) as Record<string, unknown>[]).map(withoutOrphaning);
    return async () => {
        const namespaces = new k8s.yaml.ConfigGroup("namespaces", { objs: list("namespaces.json") });
        new k8s.yaml.ConfigGroup("objects", { objs: list("objects.json") }, { dependsOn: [namespaces] });
        return {};
    };
}

function objectOf(meta: any): string | undefined {
    const inputs = meta?.new?.inputs ?? meta?.old?.inputs;
    if (!inputs?.kind || !inputs?.metadata?.name) return undefined;
    return `${inputs.kind} ${inputs.metadata.namespace ? `${inputs.metadata.namespace}/` : ""}${inputs.metadata.name}`;
}

export async function run(a: Args): Promise<EngineReport> {
    const program = a.program === "hooks" ? hooksProgram(a.chartRepo ?? "", a.values ? JSON.parse(a.values) : {}) : a.program === "floor" ? floorProgram(a.objects!) : async () => main();
    const envVars: Record<string, string> = a.skipCheckpoints ? { PULUMI_SKIP_CHECKPOINTS: "true" } : {};
    const projectName = a.program === "ops" ? "ops" : `ops-e2e-${a.program}`;
    const stack = await LocalWorkspace.createOrSelectStack({ stackName: a.stack, projectName, program }, a.program === "ops" ? { workDir: a.dir, envVars } : { workDir: a.dir, secretsProvider: "passphrase", envVars });
    const steps: EngineStep[] = [];
    const policyViolations: EngineReport["policyViolations"] = [];
    const clock = new StepClock();
    const onEvent = (e: EngineEvent) => {
        clock.observe(e);
        const pre = e.resourcePreEvent?.metadata;
        if (pre && pre.op !== "same" && pre.op !== "read" && pre.op !== "refresh") {
            steps.push({ op: pre.op, urn: pre.urn, type: pre.type, object: objectOf(pre), ...(pre.keys?.length ? { keys: pre.keys } : {}) });
        }
        const p = e.policyEvent;
        if (p) policyViolations.push({ policy: p.policyName, level: p.enforcementLevel, message: p.message, urn: p.resourceUrn });
    };
    const onOutput = (s: string) => process.stdout.write(s);
    const common = { onEvent, onOutput, color: "never" as const, ...(a.configFile ? { configFile: a.configFile } : {}), ...(a.parallel ? { parallel: a.parallel } : {}) };
    const policy = a.policyPack ? { policyPacks: [a.policyPack], policyPackConfigs: a.policyPackConfig ? [a.policyPackConfig] : [] } : {};
    const t0 = process.hrtime.bigint();
    let summary: Record<string, number> = {};
    let ok = true;
    let error: string | undefined;
    try {
        if (a.op === "up") {
            const r = await stack.up({ ...common, ...policy, refresh: a.refresh });
            summary = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        } else if (a.op === "preview") {
            const r = await stack.preview({ ...common, ...policy, refresh: a.refresh, expectNoChanges: a.expectNoChanges });
            summary = r.changeSummary as Record<string, number>;
        } else if (a.op === "refresh") {
            const r = await stack.refresh(common);
            summary = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        } else {
            const r = await stack.destroy(common);
            summary = (r.summary.resourceChanges ?? {}) as Record<string, number>;
        }
    } catch (err) {
        ok = false;
        error = err instanceof Error ? err.message : String(err);
    }
    const seconds = Number(process.hrtime.bigint() - t0) / 1e9;
    const engineSeconds = clock.first !== undefined && clock.summary !== undefined ? clock.summary - clock.first : undefined;
    const cpu = process.cpuUsage();
    const programCpuSeconds = (cpu.user + cpu.system) / 1e6;
    return { operation: a.op, stack: a.stack, ok, error, seconds, engineSeconds, programCpuSeconds, stepTimes: clock.byType(), summary, steps, policyViolations };
}

async function cli(): Promise<number> {
    const a = parseArgs(process.argv.slice(2));
    a.dir = path.resolve(a.dir);
    const report = await run(a);
    if (a.json) {
        const tmp = `${a.json}.tmp.${process.pid}`;
        fs.writeFileSync(tmp, JSON.stringify(report, null, 1));
        fs.renameSync(tmp, a.json);
    }
    if (!report.ok) console.error(`pulumi ${a.op} failed: ${report.error}`);
    const counts = Object.entries(report.summary).map(([k, v]) => `${k} ${v}`).join(", ");
    const engine = report.engineSeconds !== undefined ? `, engine ${report.engineSeconds.toFixed(1)}s from its first event to its summary` : "";
    const levers = [a.parallel ? `--parallel ${a.parallel}` : "", a.skipCheckpoints ? "PULUMI_SKIP_CHECKPOINTS" : ""].filter(Boolean).join(", ");
    console.log(`ENGINE: pulumi ${a.op} of stack ${a.stack}${levers ? ` (${levers})` : ""}: ${report.ok ? "succeeded" : "failed"} in ${report.seconds.toFixed(1)}s${engine} (${counts || "no summary"}); ${report.policyViolations.length} policy violations`);
    return report.ok ? 0 : 1;
}

if (require.main === module) {
    cli().then((code) => process.exit(code), (err) => {
        console.error(err instanceof Error ? err.stack ?? err.message : String(err));
        process.exit(2);
    });
}
