/**
 * What an e2e step module needs from the driver: where the cluster and the work folder are, and
 * how to run kubectl and the engine. Steps print `RESULT:` lines (what was proven) and `speed:`
 * lines (figures) through `log`, and throw on failure.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { EngineReport } from "../engine";

export interface StepContext {
    /** Admin kubeconfig of the e2e cluster. */
    kubeconfig: string;
    /** The kubectl to run (1.36.3 of the toolchain). */
    kubectl: string;
    /** The run's work folder: all.json (the render as a JSON List, cli.ts lists), logs/. */
    work: string;
    /** The project folder the engine runs in (<work>/project) and the stack. */
    projectDir: string;
    stack: string;
    /** Environment of the engine's process (PATH with the plugins, PULUMI_HOME, the passphrase). */
    env: NodeJS.ProcessEnv;
    log: (line: string) => void;
    /** How many times a timed figure is taken (median reported); default 3. */
    repeat?: number;
}

const REPO_DIR = path.resolve(__dirname, "..", "..", "..");

export interface Ran {
    code: number;
    stdout: string;
    stderr: string;
    seconds: number;
}

export function runCommand(cmd: string, args: string[], opts: { env?: NodeJS.ProcessEnv; cwd?: string; input?: string } = {}): Promise<Ran> {
    return new Promise((resolve, reject) => {
        const t0 = process.hrtime.bigint();
        const child = spawn(cmd, args, { env: opts.env ?? process.env, cwd: opts.cwd, stdio: ["pipe", "pipe", "pipe"] });
        let stdout = "";
        let stderr = "";
        child.stdout.on("data", (d) => (stdout += d));
        child.stderr.on("data", (d) => (stderr += d));
        child.on("error", reject);
        child.on("close", (code) => resolve({ code: code ?? 1, stdout, stderr, seconds: Number(process.hrtime.bigint() - t0) / 1e9 }));
        child.stdin.end(opts.input ?? "");
    });
}

export function kubectl(ctx: StepContext, args: string[], input?: string): Promise<Ran> {
    return runCommand(ctx.kubectl, ["--kubeconfig", ctx.kubeconfig, ...args], { input });
}

/** kubectl that must succeed: its stderr in the error otherwise. */
export async function kubectlOk(ctx: StepContext, args: string[], input?: string): Promise<Ran> {
    const r = await kubectl(ctx, args, input);
    if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} failed (exit ${r.code}): ${r.stderr.trim() || r.stdout.trim()}`);
    return r;
}

/** One engine operation (tools/e2e/engine.ts in its own process), its report and its output in <work>/logs/engine-<name>.{json,log}. */
export async function engine(ctx: StepContext, op: "up" | "preview" | "refresh" | "destroy", name: string, args: string[] = []): Promise<EngineReport> {
    const json = path.join(ctx.work, `engine-${name}.json`);
    fs.mkdirSync(path.join(ctx.work, "logs"), { recursive: true });
    const r = await runCommand(path.join(REPO_DIR, "node_modules", ".bin", "tsx"), [path.join(REPO_DIR, "tools", "e2e", "engine.ts"), op, "--dir", ctx.projectDir, "--stack", ctx.stack, "--json", json, ...args], { env: ctx.env, cwd: REPO_DIR });
    fs.writeFileSync(path.join(ctx.work, "logs", `engine-${name}.log`), r.stdout + r.stderr);
    if (!fs.existsSync(json)) throw new Error(`engine ${op} (${name}) wrote no report (exit ${r.code}): ${(r.stderr || r.stdout).trim().split("\n").slice(-5).join(" | ")}`);
    return JSON.parse(fs.readFileSync(json, "utf8")) as EngineReport;
}

export function median(xs: number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
}
