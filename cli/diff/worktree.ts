/**
 * The base side of the diff: a temporary `git worktree` of the base revision (with the
 * repository's node_modules linked in), rendered by that revision's own render tool in a child
 * process, and removed again whatever happens.
 */
import { ChildProcess, execFileSync, spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { alive } from "../harness/output";
import type { PolicyResource } from "./policy";

const git = (repo: string, args: string[]) => execFileSync("git", ["-C", repo, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** The commit a ref names, or an error naming the ref (or saying that `repo` is no git repository). */
export function resolveCommit(repo: string, ref: string): string {
    try {
        git(repo, ["rev-parse", "--git-dir"]);
    } catch (err) {
        const missing = (err as NodeJS.ErrnoException).code === "ENOENT";
        throw new Error(missing ? "git is not installed: npm run diff renders the base revision from a git worktree" : `${repo} is not a git repository: npm run diff compares the working tree with a revision of its git history; run it in a clone of the repository`);
    }
    try {
        return git(repo, ["rev-parse", "--verify", "--quiet", `${ref}^{commit}`]);
    } catch {
        throw new Error(`--base ${ref} is not a commit of ${repo} (fetch it first, e.g. git fetch origin ${ref})`);
    }
}

/** Renders running now (their process groups), stopped when the diff is interrupted. */
const running = new Set<ChildProcess>();

/**
 * Runs `use` in a detached worktree of `commit`; the worktree is removed afterwards, also on
 * failure and on Ctrl-C or SIGTERM (the running render is stopped, the worktree removed, then the
 * process exits with 130 or 143).
 */
const TMP_PREFIX = "ops-diff-";
const OWNER_FILE = "owner";

/**
 * Removes the worktrees of earlier diffs that were killed before they could clean up (SIGKILL, or
 * a wrapper that kills its child before the child's handler runs): a worktree under
 * <tmp>/ops-diff-*\/base whose owner process is gone. Returns the folders removed.
 */
export function removeStaleWorktrees(repo: string): string[] {
    let listing: string;
    try {
        listing = git(repo, ["worktree", "list", "--porcelain"]);
    } catch {
        return [];
    }
    const tmp = fs.realpathSync(os.tmpdir());
    const removed: string[] = [];
    for (const line of listing.split("\n")) {
        if (!line.startsWith("worktree ")) continue;
        const dir = line.slice("worktree ".length);
        const parent = path.dirname(dir);
        if (path.basename(dir) !== "base" || path.dirname(parent) !== tmp || !path.basename(parent).startsWith(TMP_PREFIX)) continue;
        let owner = NaN;
        try {
            owner = Number(fs.readFileSync(path.join(parent, OWNER_FILE), "utf8").trim());
        } catch {
            // no owner file: written right after the folder, so its diff died at once
        }
        if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner)) continue;
        try {
            git(repo, ["worktree", "remove", "--force", dir]);
        } catch {
            // gone already; pruned below
        }
        // A killed diff's own children outlive it (SIGKILL reaches one process): git still checking
        // out the worktree (\`git worktree add\` runs its checkout inside it), the base render. They
        // would recreate the folder after it is removed (git creates leading directories), so they
        // are stopped first; then remove until the folder stays gone, for up to 30 s, and never stop
        // this diff for it.
        stopProcessesIn(parent);
        const problem = removeUntilGone(parent, 30_000);
        if (problem) {
            process.stderr.write(`could not remove the leftover ${parent} of an earlier diff: ${problem}\n`);
            continue;
        }
        removed.push(dir);
    }
    if (removed.length > 0) {
        try {
            git(repo, ["worktree", "prune"]);
        } catch {
            // best effort
        }
    }
    return removed;
}

/** mkdtemp's name for a diff's temporary folder: the prefix and six characters. */
const TMP_NAME = new RegExp(`^${TMP_PREFIX}[A-Za-z0-9]{6}$`);
/** How old a diff's folder without an owner must be to be left over: a live diff writes its owner right after creating the folder. */
const OWNERLESS_AFTER_MS = 10 * 60_000;

/**
 * Removes the temporary folders (<tmp>/ops-diff-XXXXXX) of earlier diffs that no worktree list names: a
 * diff killed before its worktree was registered or after it was removed, or one that could not write its
 * owner file (a full disk). A folder whose worktree a repository still lists is left to that repository's
 * next diff (removeStaleWorktrees). Only folders of this user whose owner process is gone (or,
 * without an owner, older than OWNERLESS_AFTER_MS) are touched; returns the folders removed.
 */
export function removeStaleFolders(): string[] {
    let tmp: string;
    let names: string[];
    try {
        tmp = fs.realpathSync(os.tmpdir());
        names = fs.readdirSync(tmp);
    } catch {
        return [];
    }
    const removed: string[] = [];
    for (const name of names) {
        if (!TMP_NAME.test(name)) continue;
        const dir = path.join(tmp, name);
        let st: fs.Stats;
        try {
            st = fs.lstatSync(dir);
        } catch {
            continue;
        }
        if (!st.isDirectory() || (process.getuid && st.uid !== process.getuid())) continue;
        if (registeredWorktree(path.join(dir, "base"))) continue; // its repository's worktree list names it: removeStaleWorktrees there
        let owner = NaN;
        try {
            owner = Number(fs.readFileSync(path.join(dir, OWNER_FILE), "utf8").trim());
        } catch {
            // none: judged by age below
        }
        const gone = Number.isInteger(owner) && owner > 0 ? owner !== process.pid && !alive(owner) : Date.now() - st.mtimeMs > OWNERLESS_AFTER_MS;
        if (!gone) continue;
        stopProcessesIn(dir);
        const problem = removeUntilGone(dir, 30_000);
        if (problem) {
            process.stderr.write(`could not remove the leftover ${dir} of an earlier diff: ${problem}\n`);
            continue;
        }
        removed.push(dir);
    }
    return removed;
}

/** True when `dir` is a git worktree whose repository still holds its administrative folder. */
function registeredWorktree(dir: string): boolean {
    try {
        const m = /^gitdir: (.+)$/m.exec(fs.readFileSync(path.join(dir, ".git"), "utf8"));
        return m !== null && fs.existsSync(m[1].trim());
    } catch {
        return false;
    }
}

const pause = (ms: number) => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);

/**
 * Stops the processes working inside `dir` (their current directory there; Linux's /proc, nothing
 * elsewhere): TERM, then KILL after 3 s. Only called for the folder of a diff whose owner is gone.
 */
function stopProcessesIn(dir: string): void {
    const inside = (): number[] => {
        let entries: string[];
        try {
            entries = fs.readdirSync("/proc").filter((e) => /^\d+$/.test(e));
        } catch {
            return [];
        }
        return entries.map(Number).filter((pid) => {
            try {
                const cwd = fs.readlinkSync(`/proc/${pid}/cwd`);
                return pid !== process.pid && (cwd === dir || cwd.startsWith(dir + path.sep));
            } catch {
                return false;
            }
        });
    };
    const signal = (pids: number[], sig: NodeJS.Signals) => {
        for (const pid of pids) {
            try {
                process.kill(pid, sig);
            } catch {
                // gone already
            }
        }
    };
    let pids = inside();
    if (pids.length === 0) return;
    signal(pids, "SIGTERM");
    const deadline = Date.now() + 3_000;
    while ((pids = pids.filter(alive)).length > 0 && Date.now() < deadline) pause(100);
    signal(pids, "SIGKILL");
    while ((pids = pids.filter(alive)).length > 0 && Date.now() < deadline + 2_000) pause(100);
}

/**
 * Removes `dir`, again while something still writes into it, until it has stayed gone for a
 * moment; the last error if it is still there after `ms`.
 */
function removeUntilGone(dir: string, ms: number): string | undefined {
    const deadline = Date.now() + ms;
    for (;;) {
        let problem: string | undefined;
        try {
            fs.rmSync(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 });
        } catch (e) {
            problem = (e as Error).message;
        }
        if (!fs.existsSync(dir)) {
            pause(300);
            if (!fs.existsSync(dir)) return undefined;
        }
        if (Date.now() > deadline) return problem ?? "it reappeared while it was removed";
        pause(200);
    }
}

export async function withWorktree<T>(repo: string, commit: string, use: (dir: string) => Promise<T>): Promise<T> {
    for (const stale of removeStaleWorktrees(repo)) process.stderr.write(`removed the temporary worktree ${stale} of an earlier diff that was killed\n`);
    for (const stale of removeStaleFolders()) process.stderr.write(`removed ${stale}, left by an earlier diff that did not finish\n`);
    const parent = fs.mkdtempSync(path.join(os.tmpdir(), TMP_PREFIX));
    try {
        fs.writeFileSync(path.join(parent, OWNER_FILE), `${process.pid}\n`);
    } catch (err) {
        fs.rmSync(parent, { recursive: true, force: true });
        const e = err as NodeJS.ErrnoException;
        throw new Error(`npm run diff cannot write its temporary folder in ${os.tmpdir()}: ${e.code === "ENOSPC" ? "no space left on device (ENOSPC)" : e.message}; set TMPDIR to a folder with room`);
    }
    const dir = path.join(parent, "base");
    let cleaned = false;
    const cleanup = () => {
        if (cleaned) return;
        cleaned = true;
        try {
            git(repo, ["worktree", "remove", "--force", dir]);
        } catch {
            // Not created, or already gone: prune its administrative entry below.
        }
        fs.rmSync(parent, { recursive: true, force: true });
        try {
            git(repo, ["worktree", "prune"]);
        } catch {
            // best effort
        }
    };
    const onSignal = (signal: NodeJS.Signals) => {
        for (const child of running) stop(child);
        cleanup();
        process.stderr.write(`diff interrupted (${signal}): the temporary worktree ${dir} was removed\n`);
        process.exit(signal === "SIGINT" ? 130 : 143);
    };
    process.on("SIGINT", onSignal);
    process.on("SIGTERM", onSignal);
    try {
        git(repo, ["worktree", "add", "--detach", dir, commit]);
        const modules = path.join(repo, "node_modules");
        if (fs.existsSync(modules) && !fs.existsSync(path.join(dir, "node_modules"))) fs.symlinkSync(modules, path.join(dir, "node_modules"), "dir");
        return await use(dir);
    } finally {
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        cleanup();
    }
}

function stop(child: ChildProcess): void {
    try {
        if (child.pid) process.kill(-child.pid, "SIGTERM"); // its own process group: npx, tsx and node
    } catch {
        // already gone
    }
}

/** Runs a command in its own process group (so an interrupted diff can stop all of it). */
function run(cmd: string, args: string[], opts: { cwd: string; timeoutMs: number }): Promise<{ status: number | null; stdout: string; stderr: string; error?: Error }> {
    return new Promise((resolve) => {
        const child = spawn(cmd, args, { cwd: opts.cwd, env: childEnv(), detached: true, stdio: ["ignore", "pipe", "pipe"] });
        running.add(child);
        let stdout = "";
        let stderr = "";
        let error: Error | undefined;
        child.stdout!.on("data", (d) => (stdout += d));
        child.stderr!.on("data", (d) => (stderr += d));
        const timer = setTimeout(() => {
            error = new Error(`timed out after ${opts.timeoutMs} ms`);
            stop(child);
        }, opts.timeoutMs);
        child.on("error", (err) => (error = err));
        child.on("close", (status) => {
            clearTimeout(timer);
            running.delete(child);
            resolve({ status, stdout, stderr, error });
        });
    });
}

export type BaseRender =
    /** The render produced manifests; problems are what it reported (it may still have exited 1). */
    | { rendered: true; objects: K8sObject[]; resources: PolicyResource[]; problems: string[]; files?: Record<string, string> }
    /** No render at all: the reason says why. */
    | { rendered: false; reason: string };

/** Where a revision keeps its render command: cli/ since the layout change, tools/ before it. */
const RENDER_ENTRIES = ["cli/render.ts", "tools/render.ts"];

/** The revision's render command (relative to `dir`), or undefined when it has none. */
export const renderEntry = (dir: string): string | undefined => RENDER_ENTRIES.find((e) => fs.existsSync(path.join(dir, e)));

/** Renders `stack` with the revision's own render command: `npx tsx cli/render.ts --stack <s> --out <dir>`. */
export async function renderRevision(dir: string, stack: string, timeoutMs = 180_000): Promise<BaseRender> {
    const entry = renderEntry(dir);
    if (!entry) return { rendered: false, reason: `the base revision has no render tool (${RENDER_ENTRIES.join(" or ")})` };
    // Beside the worktree, in the diff's temporary folder: an interrupted diff removes it with the worktree.
    const out = fs.mkdtempSync(path.join(path.dirname(dir), "render-"));
    try {
        // A subfolder: the render takes its output folder's place by rename.
        const result = await run("npx", ["--no", "--", "tsx", entry, "--stack", stack, "--out", path.join(out, "render")], { cwd: dir, timeoutMs });
        const manifests = path.join(out, "render", "manifests.yaml");
        const output = `${result.stdout}${result.stderr}`;
        if (result.error || !fs.existsSync(manifests)) {
            const why = result.error ? result.error.message : `exit status ${result.status}`;
            return { rendered: false, reason: `the base render failed (${why}): ${lastLines(output)}` };
        }
        const objects = YAML.parseAllDocuments(fs.readFileSync(manifests, "utf8")).map((d) => d.toJS() as K8sObject).filter((o) => o && typeof o === "object");
        return { rendered: true, objects, resources: readResources(path.join(out, "render", "resources.json")), problems: result.status === 0 ? [] : renderProblems(output), files: readRenderedFiles(path.join(out, "render")) };
    } finally {
        fs.rmSync(out, { recursive: true, force: true });
    }
}

/** The render's resources.json (redacted records) as the policy pack's resources. */
export function readResources(file: string): PolicyResource[] {
    if (!fs.existsSync(file)) return [];
    const records = JSON.parse(fs.readFileSync(file, "utf8")) as Array<{ type: string; urn: string; name: string; inputs: Record<string, any> }>;
    return records.map((r) => ({ type: r.type, urn: r.urn, name: r.name, props: r.inputs ?? {} }));
}

/** The render's extra files (node pool, node agent, declared flows): everything but manifests.yaml and resources.json. */
export function readRenderedFiles(out: string): Record<string, string> {
    const files: Record<string, string> = {};
    const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            const full = path.join(dir, e.name);
            if (e.isDirectory()) walk(full);
            else {
                const rel = path.relative(out, full).split(path.sep).join("/");
                if (rel !== "manifests.yaml" && rel !== "resources.json") files[rel] = fs.readFileSync(full, "utf8");
            }
        }
    };
    walk(out);
    return files;
}

/** Pulumi settings of the calling shell must not leak into the base program's run. */
function childEnv(): NodeJS.ProcessEnv {
    const env = { ...process.env };
    for (const k of Object.keys(env)) if (k.startsWith("PULUMI_")) delete env[k];
    return env;
}

const lastLines = (text: string, n = 5) => text.trim().split("\n").slice(-n).join(" | ") || "no output";

/** The `  - <problem>` lines after "render problems: N" (before: "failed: N problem(s)") in the render's summary. */
function renderProblems(output: string): string[] {
    const problems = output.split("\n").filter((l) => /^  - /.test(l)).map((l) => l.slice(4));
    return problems.length > 0 ? problems : [`the base render exited non-zero: ${lastLines(output)}`];
}
