/**
 * npm test: every *.test.ts under test/, components/, config/, policies/, cli/ and tools/, through
 * node:test, in fewer processes than files.
 *
 * node:test runs each file in a process of its own; starting node with tsx and loading the modules
 * again costs about a second of CPU per file, which for 150 files on 2 cores was a third of npm
 * test's time. Here the files of a job share one process: a group file (written to a temporary
 * folder for the run) requires each member file inside a suite named by its path, so its tests
 * and hooks run as they would alone, one file after the other. The processes run side by side,
 * the heaviest first.
 *
 *   npm test                          every test file
 *   npm test -- test/diff.test.ts     only these files (in their jobs); --flags go to node --test
 *
 * OPS_TEST_CONCURRENCY: how many processes at once (default: the number of cores, plus one for
 * the time the processes wait on their child processes).
 */
import { spawn } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

const ROOT = path.resolve(__dirname, "..", "..");
export const DIRS = ["test", "components", "config", "policies", "cli", "tools", "bridge"];

/**
 * The processes of a run. A file goes to the job that names it in `files`, else to the job with the
 * longest prefix of its path, else to the job without either; a job with `split` is dealt into that
 * many processes by weight (below), heaviest file first, each to the lightest process so far. The
 * processes start heaviest first (node:test starts its files sorted by name: the group files are
 * numbered in this order), so that the longest one does not start last and make the run's tail.
 * The program tests (test/) render stacks, most of npm test's time. claimGuard.test runs the whole
 * program a dozen times: alone, it runs beside the others from the start. The files named alone
 * wait on child processes of their own (the render CLI, a compiled policy pack) while the others go
 * on; agreement.test runs the template and spec rule tests again inside itself to record their
 * fixtures (in a shared process those files would be loaded once, by whichever came first). A named
 * file that is not a test file is an error.
 */
export interface Job {
    name: string;
    prefixes?: string[];
    files?: string[];
    split?: number;
}
export const JOBS: Job[] = [
    { name: "program", prefixes: ["test/"], split: 3 },
    { name: "claim-guard", files: ["test/claimGuard.test.ts"] },
    { name: "backups", prefixes: ["test/backups/"] },
    { name: "render-cli", files: ["test/render.test.ts"] },
    { name: "out-safety", files: ["test/outSafety.test.ts"] },
    { name: "analyzer-shim", files: ["tools/e2e/analyzerShim.test.ts"] },
    { name: "agreement", files: ["policies/admission/agreement.test.ts"] },
    { name: "units" },
];

export function discover(root = ROOT): string[] {
    const out: string[] = [];
    const walk = (dir: string) => {
        for (const e of fs.readdirSync(dir, { withFileTypes: true })) {
            if (e.name === "node_modules" || e.name.startsWith(".")) continue;
            const full = path.join(dir, e.name);
            if (e.isDirectory()) walk(full);
            else if (e.isFile() && e.name.endsWith(".test.ts")) out.push(path.relative(root, full));
        }
    };
    for (const d of DIRS) if (fs.existsSync(path.join(root, d))) walk(path.join(root, d));
    return out.sort();
}

/**
 * CPU seconds of the heavier test files (user+sys with their child processes, from a CI=true run
 * with a cold render cache; a render shared through the render cache counts for the file that
 * asks for it first). Only the dealing and the start order read them: a stale figure makes a run
 * slower, never wrong. Every other file weighs DEFAULT_WEIGHT (the others average 0.3 s, the unit tests 0.15 s).
 */
export const WEIGHTS: Record<string, number> = {
    "test/claimGuard.test.ts": 38,
    "test/workflowMutations.test.ts": 17,
    "test/render.test.ts": 17,
    "test/planCodeCache.test.ts": 16,
    "test/backups/shellcheck.test.ts": 12,
    "test/agentServer.test.ts": 12,
    "test/outSafety.test.ts": 11,
    "test/platform.test.ts": 10,
    "test/workflowScripts.test.ts": 9,
    "test/bridge.test.ts": 8,
    "test/searchEngine.test.ts": 7,
    "test/volumeGrowth.test.ts": 7,
    "tools/e2e/analyzerShim.test.ts": 7,
    "test/addonAdmission.test.ts": 7,
    "bridge/test/bridge.test.ts": 6,
    "test/columnStore.test.ts": 5,
    "test/output.test.ts": 5,
    "test/backupCronJob.test.ts": 5,
    "test/backups/workflow.test.ts": 5,
    "test/proxyCredentials.test.ts": 5,
    "test/psp-cases.test.ts": 4,
    "test/addonPreviousAdmission.test.ts": 4,
    "test/backups/objectstore.test.ts": 4,
    "tools/e2e/children.test.ts": 4,
    "policies/gatekeeper/plan/builtins.test.ts": 4,
    "policies/admission/agreement.test.ts": 2,
};
export const DEFAULT_WEIGHT = 0.2;
export const weightOf = (file: string, weights = WEIGHTS): number => weights[file] ?? DEFAULT_WEIGHT;

/** Files dealt into n processes: heaviest first, each to the lightest process so far (ties: the first). Each process's files in path order. */
export function deal(files: string[], n: number, weights = WEIGHTS): string[][] {
    const bins = Array.from({ length: n }, () => ({ weight: 0, files: [] as string[] }));
    for (const f of [...files].sort((a, b) => weightOf(b, weights) - weightOf(a, weights) || (a < b ? -1 : 1))) {
        const bin = bins.reduce((min, b) => (b.weight < min.weight ? b : min));
        bin.files.push(f);
        bin.weight += weightOf(f, weights);
    }
    return bins.map((b) => b.files.sort());
}

/** Which files each process runs, in the order they start: heaviest first (empty ones left out). */
export function plan(files: string[], jobs = JOBS, weights = WEIGHTS): Array<{ name: string; files: string[] }> {
    const members = jobs.map(() => [] as string[]);
    for (const f of files) {
        let best = jobs.findIndex((j) => j.files?.includes(f));
        if (best === -1) {
            let length = -1;
            jobs.forEach((j, i) => j.prefixes?.forEach((p) => {
                if (f.startsWith(p) && p.length > length) [best, length] = [i, p.length];
            }));
        }
        if (best === -1) best = jobs.findIndex((j) => !j.files && !j.prefixes);
        if (best === -1) throw new Error(`${f} belongs to no job (tools/test/run.ts JOBS has no job without files and prefixes)`);
        members[best].push(f);
    }
    const out: Array<{ name: string; files: string[]; weight: number }> = [];
    jobs.forEach((j, i) => {
        const n = j.split ?? 1;
        deal(members[i], n, weights).forEach((part, k) => out.push({ name: n > 1 ? `${j.name}-${k + 1}` : j.name, files: part, weight: part.reduce((w, f) => w + weightOf(f, weights), 0) }));
    });
    // Heaviest first; Array.prototype.sort is stable, so equal weights keep the order of JOBS.
    return out.filter((j) => j.files.length > 0).sort((a, b) => b.weight - a.weight).map(({ name, files }) => ({ name, files }));
}

/**
 * The text of a group file: each member file's tests as one suite named by its path. A member that
 * is already loaded when its suite starts (another test file required it) would run nothing there:
 * that is an error naming it, not a silent empty suite.
 */
export function groupSource(files: string[], root = ROOT): string {
    const lines = [
        '"use strict";',
        "// Written by tools/test/run.ts for one npm test run.",
        'const { describe } = require("node:test");',
        "function member(name, file) {",
        "    describe(name, () => {",
        "        if (require.cache[require.resolve(file)]) throw new Error(`${name} was loaded by another test file of its group before its own suite: give it a job of its own in JOBS of tools/test/run.ts`);",
        "        require(file);",
        "    });",
        "}",
    ];
    for (const f of files) lines.push(`member(${JSON.stringify(f)}, ${JSON.stringify(path.join(root, f))});`);
    return lines.join("\n") + "\n";
}

function main(): void {
    const argv = process.argv.slice(2);
    const flags = argv.filter((a) => a.startsWith("--"));
    const wanted = argv.filter((a) => !a.startsWith("--")).map((a) => path.relative(ROOT, path.resolve(a)));
    const files = discover();
    const stale = JOBS.flatMap((j) => j.files ?? []).filter((f) => !files.includes(f));
    if (stale.length > 0) throw new Error(`tools/test/run.ts: JOBS names what is not a test file: ${stale.join(", ")}`);
    const unknown = wanted.filter((f) => !files.includes(f));
    if (unknown.length > 0) throw new Error(`not a *.test.ts file under ${DIRS.join("/, ")}/: ${unknown.join(", ")}`);
    const jobs = plan(wanted.length > 0 ? wanted : files);

    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "ops-test-groups-"));
    const groupFiles = jobs.map((j, i) => {
        const file = path.join(dir, `${String(i + 1).padStart(2, "0")}-${j.name}.test.cjs`);
        fs.writeFileSync(file, groupSource(j.files));
        return file;
    });
    const concurrency = Number(process.env.OPS_TEST_CONCURRENCY) || (os.availableParallelism?.() ?? os.cpus().length) + 1;
    const reporter = flags.some((f) => f.startsWith("--test-reporter")) ? [] : ["--test-reporter=spec"];
    // A larger young generation: a program run allocates a lot of short-lived objects, and the
    // default one spends a tenth of its time in the garbage collector (the test processes inherit it).
    const child = spawn(process.execPath, ["--max-semi-space-size=64", "--import", "tsx", "--test", `--test-concurrency=${concurrency}`, ...reporter, ...flags, ...groupFiles], { cwd: ROOT, stdio: "inherit" });
    for (const sig of ["SIGINT", "SIGTERM"] as const) process.on(sig, () => child.kill(sig));
    child.on("exit", (code, signal) => {
        fs.rmSync(dir, { recursive: true, force: true });
        process.exitCode = code ?? (signal ? 1 : 0);
    });
}

if (require.main === module) main();
