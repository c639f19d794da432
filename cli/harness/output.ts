/**
 * Writing a render folder so that nothing is lost: every file goes into a temporary folder beside
 * the target, which replaces the target by rename only once every file is written. A lock beside
 * the target (`.<name>.lock`, holding the writer's pid) makes a second writer fail with a message
 * instead of silently winning; a lock whose process is gone is taken over. On any failure the
 * temporary folder is removed and the previous output is left as it was, and the error says so.
 */
import * as fs from "fs";
import * as path from "path";

export class OutputError extends Error {
    constructor(message: string) {
        super(message);
        this.name = "OutputError";
    }
}

/** The file writes, replaceable in tests (a full disk). */
export interface OutputIo {
    writeFile(file: string, text: string): void;
}

const defaultIo: OutputIo = { writeFile: (file, text) => fs.writeFileSync(file, text) };

function describe(err: unknown): string {
    const e = err as NodeJS.ErrnoException;
    if (e?.code === "ENOSPC") return "no space left on device (ENOSPC)";
    if (e?.code === "EDQUOT") return "disk quota exceeded (EDQUOT)";
    return e?.message ?? String(err);
}

/**
 * Creates `dir` and its missing parents one level at a time. (fs.mkdirSync with `recursive`
 * loops forever under /proc, where mkdir answers ENOENT for a parent that exists.)
 */
export function ensureDir(dir: string): void {
    const missing: string[] = [];
    let cur = path.resolve(dir);
    while (!fs.existsSync(cur)) {
        missing.unshift(cur);
        const parent = path.dirname(cur);
        if (parent === cur) break;
        cur = parent;
    }
    if (!fs.statSync(cur).isDirectory()) throw new OutputError(`${cur} is not a folder`);
    for (const d of missing) {
        try {
            fs.mkdirSync(d);
        } catch (err) {
            throw new OutputError(`cannot create the folder ${d}: ${describe(err)}`);
        }
    }
}

/** Whether a process with this pid exists (a lock held by a dead process may be taken over). */
export function alive(pid: number): boolean {
    try {
        process.kill(pid, 0);
        return true;
    } catch (err) {
        return (err as NodeJS.ErrnoException).code === "EPERM";
    }
}

/** Takes the lock of `outDir` or throws naming the process that holds it. Returns the release. */
export function lockOutput(outDir: string): () => void {
    const lock = path.join(path.dirname(outDir), `.${path.basename(outDir)}.lock`);
    for (let attempt = 0; attempt < 2; attempt++) {
        try {
            fs.writeFileSync(lock, `${process.pid}\n`, { flag: "wx" });
            return () => fs.rmSync(lock, { force: true });
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new OutputError(`cannot take the lock ${lock}: ${describe(err)}`);
        }
        const owner = Number(fs.readFileSync(lock, "utf8").trim());
        if (Number.isInteger(owner) && owner > 0 && alive(owner) && owner !== process.pid)
            throw new OutputError(`another render (pid ${owner}) is writing ${outDir}; nothing was written. Wait for it to finish (or remove ${lock} if no render is running)`);
        fs.rmSync(lock, { force: true }); // its writer is gone
    }
    throw new OutputError(`cannot take the lock of ${outDir}`);
}

/**
 * Writes `files` (relative path -> text) as the whole content of `outDir`, atomically: the folder
 * afterwards holds exactly these files, or (on any error) exactly what it held before.
 */
export function writeOutputAtomically(outDir: string, files: Record<string, string>, io: OutputIo = defaultIo, opts: { lockHeld?: boolean } = {}): void {
    const target = path.resolve(outDir);
    if (fs.existsSync(target) && !fs.statSync(target).isDirectory()) throw new OutputError(`${target} exists and is not a folder; nothing was written`);
    const untouched = fs.existsSync(target) ? `the previous output in ${target} is untouched` : `nothing was written to ${target}`;
    try {
        ensureDir(path.dirname(target));
    } catch (err) {
        throw new OutputError(`${err instanceof Error ? err.message : err}; ${untouched}`);
    }
    const release = opts.lockHeld ? () => undefined : lockOutput(target);
    let tmp: string | undefined;
    try {
        try {
            tmp = fs.mkdtempSync(path.join(path.dirname(target), `.${path.basename(target)}.tmp-`));
        } catch (err) {
            throw new OutputError(`cannot create a temporary folder beside ${target}: ${describe(err)}; ${untouched}`);
        }
        for (const [file, text] of Object.entries(files)) {
            const dest = path.join(tmp, file);
            try {
                ensureDir(path.dirname(dest));
                io.writeFile(dest, text);
            } catch (err) {
                throw new OutputError(`writing ${file} failed: ${describe(err)}; ${untouched}`);
            }
        }
        const old = fs.existsSync(target) ? `${tmp}.old` : undefined;
        if (old) fs.renameSync(target, old);
        try {
            fs.renameSync(tmp, target);
        } catch (err) {
            if (old) fs.renameSync(old, target);
            throw new OutputError(`moving the new output into ${target} failed: ${describe(err)}; ${untouched}`);
        }
        tmp = undefined;
        if (old) fs.rmSync(old, { recursive: true, force: true });
    } finally {
        if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
        release();
    }
}

/**
 * Before a render: the folder's parent can be created and the lock taken (so a bad --out or a
 * concurrent render fails at once, not after the render). Returns the lock's release.
 */
export function prepareOutput(outDir: string): () => void {
    const target = path.resolve(outDir);
    try {
        ensureDir(path.dirname(target));
        return lockOutput(target);
    } catch (err) {
        throw new OutputError(`cannot write the render to ${target}: ${err instanceof Error ? err.message : err}; nothing was rendered or written`);
    }
}

/** What `npm run render` needs of a render to write it (see ./render.ts). */
export interface Publishable {
    manifests: string;
    resourcesJson: string;
    files: Record<string, string>;
    errors: string[];
}

/**
 * Writes a successful render into `outDir`; a failed render writes nothing. Returns whether the
 * folder now holds this render, and the line to print (naming what happened to the old output).
 */
export function publishRender(result: Publishable, outDir: string, io?: OutputIo, opts: { lockHeld?: boolean } = {}): { written: boolean; message: string } {
    const target = path.resolve(outDir);
    const shown = path.relative(process.cwd(), target) || ".";
    if (result.errors.length > 0) {
        const kept = fs.existsSync(target) ? `the previous output in ${shown} is untouched` : `${shown} was not created`;
        return { written: false, message: `render failed: ${result.errors.length} problem(s) above; nothing written, ${kept}` };
    }
    try {
        writeOutputAtomically(target, { "manifests.yaml": result.manifests, "resources.json": result.resourcesJson, ...result.files }, io, opts);
    } catch (err) {
        if (err instanceof OutputError) return { written: false, message: `render not written: ${err.message}` };
        throw err;
    }
    const extra = Object.keys(result.files).sort();
    return { written: true, message: `wrote ${path.join(shown, "manifests.yaml")} and resources.json${extra.length ? `, ${extra.join(", ")}` : ""}` };
}
