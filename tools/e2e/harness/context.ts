/**
 * The shared context of the e2e's steps: where things are (work folder, repository, cache), the
 * toolchain's versions (tools/e2e/lib.sh, exported by run.sh), and typed helpers to run commands,
 * kubectl, the Pulumi engine (tools/e2e/engine.ts) and background processes.
 *
 * Every command runs asynchronously: the driver's own servers (the chart repository, the ingress
 * stand-in) keep answering while a step waits for the engine. A background process started with
 * `start` is listed in <work>/pids; run.sh stops them all on exit, whatever failed.
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import type { EngineReport } from "../engine";

export interface Toolchain {
    k8s: string;
    etcd: string;
    kwok: string;
    pulumi: string;
    kubernetesProvider: string;
    /** "name version" of each control-plane binary the e2e needs (lib.sh e2e_required). */
    required: Array<[string, string]>;
    /** "name version" of the engine's binaries (lib.sh e2e_engine). */
    engine: Array<[string, string]>;
}

export interface RunResult {
    code: number;
    stdout: string;
    stderr: string;
}

export interface RunOptions {
    cwd?: string;
    env?: Record<string, string | undefined>;
    input?: string;
    /** Write stdout and stderr to this file instead of the step's log. */
    logFile?: string;
    /** Do not throw on a non-zero exit. */
    allowFail?: boolean;
    /** Keep stdout out of the step's log (large JSON). */
    quiet?: boolean;
}

/** A command that exited non-zero; its output is in the step's log. */
export class CommandFailed extends Error {
    constructor(readonly command: string, readonly result: RunResult) {
        super(`${command} exited ${result.code}${result.stderr.trim() ? `: ${result.stderr.trim().split("\n").slice(-3).join(" | ")}` : ""}`);
    }
}

/** What a step writes: its log (shown, last 25 lines, when it fails) and its RESULT lines. */
export interface StepIO {
    log(line: string): void;
    result(line: string): void;
    readonly logFile: string;
}

const NULL_IO: StepIO = { log: () => undefined, result: () => undefined, logFile: "/dev/null" };

export class Context {
    readonly work: string;
    readonly repo: string;
    readonly e2eDir: string;
    readonly cache: string;
    readonly tools: Toolchain;
    readonly tsx: string;
    /** helm's version (lib.sh HELM_VERSION): the real-chart steps only. */
    readonly helmVersion: string;
    readonly repeat: number;
    readonly kubeconfig: string;
    /** Timings the speed section reads (seconds). */
    readonly times = new Map<string, number[]>();
    /** When the kubectl path's apply of the render started (the speed figure ends at its waits). */
    kubectlApplyStart?: bigint;
    /** The step being run (its log); commands write there. */
    io: StepIO = NULL_IO;
    ports: { etcd: number; etcdPeer: number; api: number } = { etcd: 0, etcdPeer: 0, api: 0 };

    constructor(env: NodeJS.ProcessEnv = process.env) {
        const need = (k: string) => {
            const v = env[k];
            if (!v) throw new Error(`${k} is not set: start the e2e with npm run e2e (tools/e2e/run.sh)`);
            return v;
        };
        this.work = need("E2E_WORK");
        this.e2eDir = path.resolve(__dirname, "..");
        this.repo = path.resolve(this.e2eDir, "../..");
        this.cache = need("E2E_CACHE");
        const pairs = (s: string) => s.split("\n").filter(Boolean).map((l) => l.split(" ") as [string, string]);
        this.tools = {
            k8s: need("K8S_VERSION"),
            etcd: need("ETCD_VERSION"),
            kwok: need("KWOK_VERSION"),
            pulumi: need("PULUMI_VERSION"),
            kubernetesProvider: need("KUBERNETES_PROVIDER_VERSION"),
            required: pairs(need("E2E_REQUIRED")),
            engine: pairs(need("E2E_ENGINE")),
        };
        this.tsx = path.join(this.repo, "node_modules/.bin/tsx");
        this.helmVersion = env.HELM_VERSION ?? "";
        this.repeat = Number(env.E2E_REPEAT ?? 3);
        this.kubeconfig = path.join(this.work, "pki/admin.kubeconfig");
    }

    /** The cached binary of a tool (present or not), as lib.sh's bin_path. */
    bin(name: string, version: string): string {
        return path.join(this.cache, `${name}-${version}`, name);
    }

    kwokStages(): string {
        return path.join(path.dirname(this.bin("kwok", this.tools.kwok)), "stages.yaml");
    }

    /** The tools of a list missing from the cache, as "name-version". */
    missing(list: Array<[string, string]>): string[] {
        return list.filter(([n, v]) => !isExecutable(this.bin(n, v))).map(([n, v]) => `${n}-${v}`);
    }

    path(...parts: string[]): string {
        return path.join(this.work, ...parts);
    }

    /** Runs a command; its output goes to the step's log; throws CommandFailed on a non-zero exit unless allowFail. */
    async run(cmd: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
        const shown = `${path.basename(cmd)} ${args.join(" ")}`.slice(0, 300);
        const child = spawn(cmd, args, { cwd: opts.cwd ?? this.work, env: { ...process.env, ...opts.env }, stdio: ["pipe", "pipe", "pipe"] });
        const out: Buffer[] = [];
        const err: Buffer[] = [];
        const logTo = opts.logFile ? fs.createWriteStream(opts.logFile) : undefined;
        child.stdout.on("data", (b: Buffer) => {
            out.push(b);
            logTo?.write(b);
        });
        child.stderr.on("data", (b: Buffer) => {
            err.push(b);
            logTo?.write(b);
        });
        child.stdin.on("error", () => undefined);
        child.stdin.end(opts.input ?? "");
        const code = await new Promise<number>((resolve) => {
            child.on("error", (e) => {
                err.push(Buffer.from(String(e)));
                resolve(127);
            });
            child.on("close", (c, signal) => resolve(c ?? (signal ? 128 : 1)));
        });
        await new Promise<void>((resolve) => (logTo ? logTo.end(resolve) : resolve()));
        const result = { code, stdout: Buffer.concat(out).toString("utf8"), stderr: Buffer.concat(err).toString("utf8") };
        if (!opts.logFile) {
            this.io.log(`$ ${shown}`);
            if (!opts.quiet && result.stdout.trim()) this.io.log(result.stdout.trimEnd());
            if (result.stderr.trim()) this.io.log(result.stderr.trimEnd());
        }
        if (code !== 0 && !opts.allowFail) throw new CommandFailed(shown, result);
        return result;
    }

    /** kubectl 1.36 against this run's API server (its discovery cache in the work folder). */
    kubectl(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
        return this.run(this.bin("kubectl", this.tools.k8s), ["--kubeconfig", this.kubeconfig, "--cache-dir", this.path("kube-cache"), ...args], opts);
    }

    async kubectlJson<T = any>(args: readonly string[]): Promise<T> {
        return JSON.parse((await this.kubectl([...args, "-o", "json"], { quiet: true })).stdout) as T;
    }

    /** Names of objects (kubectl get -o name), one per line; none when kubectl fails. */
    async names(args: readonly string[]): Promise<string[]> {
        const r = await this.kubectl(["get", ...args, "-o", "name"], { allowFail: true, quiet: true });
        return r.code === 0 ? r.stdout.split("\n").filter(Boolean) : [];
    }

    /** A TypeScript tool of the repository through tsx, from the repository. */
    tsxRun(script: string, args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
        return this.run(this.tsx, [script, ...args], { cwd: this.repo, ...opts });
    }

    /** The pulumi CLI (on PATH through <work>/bin) in the project folder. */
    pulumi(args: readonly string[], opts: RunOptions = {}): Promise<RunResult> {
        return this.run("pulumi", args, { cwd: this.path("project"), ...opts });
    }

    /**
     * One engine operation (tools/e2e/engine.ts in its own process: each run loads the program
     * afresh): its report, output in logs/engine-NAME.log, the ENGINE line in the step's log.
     */
    async engine(op: "up" | "preview" | "refresh" | "destroy", stack: string, name: string, args: readonly string[] = [], opts: { dir?: string } = {}): Promise<EngineReport & { exitCode: number }> {
        const json = this.path(`engine-${name}.json`);
        const log = this.path("logs", `engine-${name}.log`);
        fs.rmSync(json, { force: true });
        const r = await this.run(this.tsx, [path.join(this.e2eDir, "engine.ts"), op, "--dir", opts.dir ?? this.path("project"), "--stack", stack, "--json", json, ...args], { logFile: log, allowFail: true });
        const text = fs.readFileSync(log, "utf8");
        const line = text.split("\n").filter((l) => l.startsWith("ENGINE: "));
        this.io.log(line.length ? line.join("\n") : text.split("\n").slice(-30).join("\n"));
        if (!fs.existsSync(json)) throw new Error(`pulumi ${op} of ${stack} (${name}) wrote no report (exit ${r.code}); log: ${log}`);
        return { ...(JSON.parse(fs.readFileSync(json, "utf8")) as EngineReport), exitCode: r.code };
    }

    /** Starts a background process of the run, logged to logs/NAME.log, listed in <work>/pids. */
    start(name: string, cmd: string, args: readonly string[], opts: { cwd?: string; env?: Record<string, string> } = {}): number {
        const log = fs.openSync(this.path("logs", `${name}.log`), "a");
        const child = spawn(cmd, args, { cwd: opts.cwd ?? this.work, env: { ...process.env, ...opts.env }, stdio: ["ignore", log, log], detached: false });
        fs.closeSync(log);
        if (child.pid === undefined) throw new Error(`${name}: ${cmd} did not start`);
        fs.appendFileSync(this.path("pids"), `${child.pid}\n`);
        child.unref();
        this.io.log(`${name}: pid ${child.pid}, log ${this.path("logs", `${name}.log`)}`);
        return child.pid;
    }

    /** Waits until `check` resolves true (errors count as not yet), every half second, at most `seconds`. */
    async waitFor(seconds: number, what: string, check: () => Promise<boolean>): Promise<void> {
        const end = Date.now() + seconds * 1000;
        for (;;) {
            if (await check().catch(() => false)) return;
            if (Date.now() > end) throw new Error(`timed out after ${seconds}s waiting for ${what}`);
            await sleep(500);
        }
    }

    /** A timing for the speed section. */
    time(key: string, seconds: number): void {
        this.times.set(key, [...(this.times.get(key) ?? []), seconds]);
    }
}

export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

function isExecutable(file: string): boolean {
    try {
        fs.accessSync(file, fs.constants.X_OK);
        return fs.statSync(file).isFile();
    } catch {
        return false;
    }
}

/** Seconds since `t0` (process.hrtime.bigint()), one decimal. */
export function since(t0: bigint): number {
    return Math.round(Number(process.hrtime.bigint() - t0) / 1e8) / 10;
}

export function median(xs: readonly number[]): number {
    const s = [...xs].sort((a, b) => a - b);
    if (s.length === 0) return NaN;
    return s.length % 2 ? s[(s.length - 1) / 2] : Math.round(((s[s.length / 2 - 1] + s[s.length / 2]) / 2) * 10) / 10;
}

/** Writes a file through a temp name and a rename. */
export function writeAtomic(file: string, text: string): void {
    const tmp = `${file}.tmp.${process.pid}`;
    fs.writeFileSync(tmp, text);
    fs.renameSync(tmp, file);
}
