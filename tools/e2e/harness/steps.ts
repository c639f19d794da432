/**
 * Steps of the e2e: each runs with its own log (<work>/logs/step-N.log) and prints one line with
 * its result and time, then its RESULT lines; a failed step prints the last 25 lines of its log.
 * The summary is `total <s>` and `e2e: N passed, N failed, N skipped` (the last line).
 *
 *   ok     3 etcd 3.6.16                                                      0.8s
 *   FAIL   9 server-side apply of the render                                 12.0s (exit 1)
 *   skip     pulumi project, stacks ci and prod, ...                       (why)
 */
import * as fs from "node:fs";
import { CommandFailed, Context, since, type StepIO } from "./context";

export type StepFn = (ctx: Context, io: StepIO) => Promise<void>;

/** A step the following ones need: on failure the run ends there (with the summary). */
export class RunEnded extends Error {}

export class Steps {
    passed = 0;
    failed = 0;
    skipped = 0;
    private n = 0;
    private readonly t0 = process.hrtime.bigint();

    constructor(readonly ctx: Context, private readonly print: (line: string) => void = (l) => process.stdout.write(`${l}\n`)) {}

    /** Runs a step; true when it passed. */
    async step(name: string, fn: StepFn): Promise<boolean> {
        this.n += 1;
        const logFile = this.ctx.path("logs", `step-${this.n}.log`);
        const results: string[] = [];
        const fd = fs.openSync(logFile, "a");
        const io: StepIO = {
            logFile,
            log: (line) => fs.writeSync(fd, `${line}\n`),
            result: (line) => {
                results.push(line);
                fs.writeSync(fd, `RESULT: ${line}\n`);
            },
        };
        const t0 = process.hrtime.bigint();
        const outer = this.ctx.io;
        this.ctx.io = io;
        let error: unknown;
        try {
            await fn(this.ctx, io);
        } catch (err) {
            error = err;
            // A check that failed says why in its message; a programming error shows where.
            const bug = err instanceof TypeError || err instanceof ReferenceError || err instanceof SyntaxError || err instanceof RangeError;
            io.log(err instanceof Error ? (bug ? (err.stack ?? err.message) : err.message) : String(err));
        } finally {
            this.ctx.io = outer;
            fs.closeSync(fd);
        }
        const took = `${since(t0).toFixed(1)}s`;
        const label = name.padEnd(62);
        if (error === undefined) {
            this.passed += 1;
            this.print(`ok    ${String(this.n).padStart(2)} ${label} ${took.padStart(8)}`);
            for (const r of results) this.print(`        ${r}`);
            return true;
        }
        this.failed += 1;
        const code = error instanceof CommandFailed ? error.result.code : 1;
        this.print(`FAIL  ${String(this.n).padStart(2)} ${label} ${took.padStart(8)} (exit ${code})`);
        const tail = fs.readFileSync(logFile, "utf8").trimEnd().split("\n").slice(-25);
        for (const l of tail) this.print(`        | ${l}`);
        return false;
    }

    /** A step the next ones need: when it fails the run ends (RunEnded). */
    async must(name: string, fn: StepFn): Promise<void> {
        if (!(await this.step(name, fn))) throw new RunEnded(name);
    }

    /** A step this machine cannot run, said as such and counted as skipped. */
    skip(name: string, why: string): void {
        this.skipped += 1;
        this.print(`skip     ${name.padEnd(62)} (${why})`);
    }

    /** Plain lines between steps (the speed section). */
    line(text: string): void {
        this.print(text);
    }

    /** The summary; the exit status of the run. */
    finish(): number {
        this.print(`total ${since(this.t0).toFixed(1)}s`);
        this.print(`e2e: ${this.passed} passed, ${this.failed} failed, ${this.skipped} skipped`);
        return this.failed ? 1 : 0;
    }
}
