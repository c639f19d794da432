/**
 * The engine levers of issue 29 measured A/B on the e2e control plane (`E2E_LAB=levers npm run e2e`:
 * the control plane and the engine set-up as `npm run e2e` does, then only this). Each round runs
 * every variant in turn (interleaved, so that the shared machine's load falls on all of them):
 * fresh stand-in volumes, `pulumi up` from empty, `pulumi preview --refresh --expect-no-changes`,
 * `kubectl diff --server-side` of the render, `pulumi destroy`. A variant is environment for the
 * engine's processes (the CLI and the provider read it), each variable read in the pinned source
 * (docs/e2e.md, "Engine speed: the levers"). Prints `speed: lab` lines with every figure and the
 * medians, and the load average at each round.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";
import type { Steps } from "../harness/steps";
import { ingressStandIn, setup } from "./pulumi";
import type { EngineReport } from "../engine";
import { kubectl, median, runCommand, type StepContext } from "./context";
import { driverStepContext, freshVolumes } from "./speed";

export interface Variant {
    name: string;
    env: Record<string, string>;
    args?: string[];
    /** "floor": not the program but the render's objects alone through the engine (engine.ts floorProgram), stack "floor". */
    program?: "floor";
}

/**
 * E2E_LAB_VARIANTS picks among these by name (comma-separated); default: all. "default" is the
 * repository as it is: the provider's client limits of Pulumi.yaml (kubernetes:kubeClientSettings,
 * config/kubeClient.ts) and the zstd state file of run.sh. The provider reads PULUMI_K8S_CLIENT_QPS
 * and _BURST only when the config leaves them unset (pkg/provider/provider.go:803-822), so its own
 * defaults (50 a second, bursts of 120) need a stack file that sets them (not a variant here).
 */
export const VARIANTS: Variant[] = [
    { name: "default", env: {} },
    // The state file written plain (pulumi 3.259.0 pkg/backend/diy/backend.go:1719-1731 resolveCompression,
    // env DIY_BACKEND_ZSTD of sdk/go/common/env/env.go:191, PULUMI_-prefixed; "false" is false: util/env/env.go:346).
    { name: "plain-state", env: { PULUMI_DIY_BACKEND_ZSTD: "false" } },
    // Diffs in parallel instead of one at a time in the step generator (pkg/resource/deploy/step_generator.go:2931,
    // env PARALLEL_DIFF of sdk/go/common/env/env.go:150, read by preview/up at pkg/cmd/pulumi/operations/preview.go:568).
    { name: "parallel-diff", env: { PULUMI_PARALLEL_DIFF: "true" } },
    // No checkpoint until the operation ends (pkg/backend/snapshot.go:1008 unsafeServiceLoop): not for real deploys.
    { name: "skip-checkpoints", env: {}, args: ["--skip-checkpoints"] },
    // The engine's floor: the fair kubectl converge's objects, each a resource of the provider, nothing of the program;
    // the client limits of Pulumi.yaml given as the provider's variables (provider.go:803-822), its project having none.
    { name: "floor", env: { PULUMI_K8S_CLIENT_QPS: "1000", PULUMI_K8S_CLIENT_BURST: "1000" }, program: "floor" },
];

interface Figures { up: number[]; upEngine: number[]; upCpu: number[]; preview: number[]; previewCpu: number[]; destroy: number[] }

const REPO_DIR = path.resolve(__dirname, "..", "..", "..");

/**
 * One engine operation as ./context.ts engine() runs it, under /usr/bin/time: besides the wall
 * time, the CPU seconds (user + system) of the whole process tree (tsx, the CLI, the provider),
 * which the load of the shared machine does not inflate as it does the wall time.
 */
async function timedEngine(ctx: StepContext, op: "up" | "preview" | "destroy", name: string, args: string[], program?: "floor"): Promise<EngineReport & { cpu: number }> {
    const json = path.join(ctx.work, `engine-${name}.json`);
    const cpuFile = path.join(ctx.work, `engine-${name}.cpu`);
    const target = program === "floor"
        ? ["--dir", path.join(ctx.work, "floor"), "--stack", "floor", "--program", "floor", "--objects", ctx.work]
        : ["--dir", ctx.projectDir, "--stack", ctx.stack];
    if (program === "floor") fs.mkdirSync(path.join(ctx.work, "floor"), { recursive: true });
    const r = await runCommand("/usr/bin/time", ["-o", cpuFile, "-f", "%U %S", path.join(REPO_DIR, "node_modules", ".bin", "tsx"), path.join(REPO_DIR, "tools", "e2e", "engine.ts"), op, ...target, "--json", json, ...args], { env: ctx.env, cwd: REPO_DIR });
    fs.writeFileSync(path.join(ctx.work, "logs", `engine-${name}.log`), r.stdout + r.stderr);
    if (!fs.existsSync(json)) throw new Error(`engine ${op} (${name}) wrote no report (exit ${r.code}): ${(r.stderr || r.stdout).trim().split("\n").slice(-5).join(" | ")}`);
    const [user, sys] = fs.readFileSync(cpuFile, "utf8").trim().split("\n").pop()!.split(" ").map(Number);
    return { ...(JSON.parse(fs.readFileSync(json, "utf8")) as EngineReport), cpu: user + sys };
}

/**
 * The CLI calls the Automation API makes around an up (node_modules/@pulumi/pulumi/automation:
 * cmd.js `version`, localWorkspace.js `stack select`, stack.js up(): `stack output --json` twice,
 * one with --show-secrets, and `stack history --json`), each timed on its own (median of 3).
 */
async function cliCalls(ctx: StepContext): Promise<string> {
    const calls: Array<[string, string[]]> = [
        ["version", ["version"]],
        ["stack select", ["stack", "select", ctx.stack]],
        ["stack output", ["stack", "output", "--json", "--stack", ctx.stack]],
        ["stack output --show-secrets", ["stack", "output", "--json", "--show-secrets", "--stack", ctx.stack]],
        ["stack history", ["stack", "history", "--json", "--page-size", "1", "--stack", ctx.stack]],
    ];
    const out: string[] = [];
    for (const [name, args] of calls) {
        const t: number[] = [];
        for (let i = 0; i < 3; i++) {
            const r = await runCommand("pulumi", args, { env: ctx.env, cwd: ctx.projectDir });
            if (r.code !== 0) throw new Error(`pulumi ${args.join(" ")} failed: ${r.stderr.trim()}`);
            t.push(r.seconds);
        }
        out.push(`${name} ${median(t).toFixed(2)} s`);
    }
    return out.join(", ");
}

const load = () => os.loadavg().map((x) => x.toFixed(1)).join(" ");

export async function lab(ctx: Context, io: StepIO): Promise<void> {
    const lines: string[] = [];
    const base = driverStepContext(ctx, io, lines);
    const pick = (process.env.E2E_LAB_VARIANTS ?? "").split(",").filter(Boolean);
    const variants = pick.length ? VARIANTS.filter((v) => pick.includes(v.name)) : VARIANTS;
    const rounds = Number(process.env.E2E_LAB_ROUNDS ?? 3);
    const figures = new Map<string, Figures>(variants.map((v) => [v.name, { up: [], upEngine: [], upCpu: [], preview: [], previewCpu: [], destroy: [] }]));
    const diffs: number[] = [];
    const stateDir = ctx.path("state", ".pulumi", "stacks", "ops");
    for (let round = 1; round <= rounds; round++) {
        base.log(`speed: lab round ${round}, load average ${load()}`);
        for (const v of variants) {
            const sc: StepContext = { ...base, env: { ...process.env, ...v.env } };
            const f = figures.get(v.name)!;
            const tag = `${v.name.replace(/[^a-z0-9]+/g, "-")}-${round}`;
            await freshVolumes(sc);
            const up = await timedEngine(sc, "up", `lab-up-${tag}`, v.args ?? [], v.program);
            if (!up.ok) throw new Error(`pulumi up (${v.name}) failed: ${up.error}`);
            f.up.push(up.seconds);
            f.upEngine.push(up.engineSeconds ?? NaN);
            f.upCpu.push(up.cpu);
            if (round === 1 && v === variants[0]) base.log(`speed: lab the Automation API's CLI calls around an up, each alone: ${await cliCalls(sc)}`);
            for (const f of ["ci.json", "ci.json.zst"]) {
                if (fs.existsSync(path.join(stateDir, f))) fs.copyFileSync(path.join(stateDir, f), ctx.path(`state-${tag}-${f}`));
            }
            const pv = await timedEngine(sc, "preview", `lab-refresh-${tag}`, ["--refresh", "--expect-no-changes", ...(v.args ?? []).filter((a) => a !== "--skip-checkpoints")], v.program);
            if (!pv.ok) throw new Error(`pulumi preview --refresh (${v.name}) failed: ${pv.error}`);
            f.preview.push(pv.seconds);
            f.previewCpu.push(pv.cpu);
            const d = await kubectl(sc, ["diff", "--server-side", "--force-conflicts", "--field-manager", "ops-e2e", "-f", path.join(ctx.work, "all.json")]);
            if (d.code > 1) throw new Error(`kubectl diff --server-side failed (exit ${d.code}): ${d.stderr.trim()}`);
            diffs.push(d.seconds);
            // The clean-up is not a figure of the lab: as fast as the engine goes.
            const down = await timedEngine(sc, "destroy", `lab-destroy-${tag}`, ["--skip-checkpoints"], v.program);
            if (!down.ok) throw new Error(`pulumi destroy (${v.name}) failed: ${down.error}`);
            f.destroy.push(down.seconds);
            base.log(`speed: lab ${v.name} round ${round}: up ${up.seconds.toFixed(1)} s (engine ${(up.engineSeconds ?? NaN).toFixed(1)} s, CPU ${up.cpu.toFixed(1)} s), preview --refresh ${pv.seconds.toFixed(1)} s (CPU ${pv.cpu.toFixed(1)} s), kubectl diff ${d.seconds.toFixed(1)} s, destroy ${down.seconds.toFixed(1)} s; load ${load()}`);
        }
    }
    const fmt = (xs: number[]) => `${median(xs).toFixed(1)} (${xs.map((x) => x.toFixed(1)).join(", ")})`;
    for (const [name, f] of figures) {
        base.log(`speed: lab ${name} medians of ${rounds}: up ${fmt(f.up)} s, engine ${fmt(f.upEngine)} s, up CPU ${fmt(f.upCpu)} s, preview --refresh ${fmt(f.preview)} s, its CPU ${fmt(f.previewCpu)} s, destroy ${fmt(f.destroy)} s`);
    }
    base.log(`speed: lab kubectl diff --server-side median ${fmt(diffs)} s`);
    fs.writeFileSync(ctx.path("speed-lab.txt"), lines.join("\n") + "\n");
}

/** The driver's path for E2E_LAB=levers, after the control plane: the engine set-up, then the lab. */
export async function labPath(ctx: Context, run: Steps): Promise<void> {
    await run.must("pulumi project, stacks ci and prod, secrets, add-on chart stand-ins", async (c, io) => {
        await c.tsxRun(path.join(c.e2eDir, "cli.ts"), ["lists", c.path("render/manifests.yaml"), c.work]);
        await setup(c, io);
    });
    const ingress = ingressStandIn(ctx);
    try {
        await run.step("speed: engine levers A/B (E2E_LAB=levers)", lab);
    } finally {
        ingress.stop();
    }
}
