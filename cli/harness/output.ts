/**
 * Writing a render folder so that nothing is lost: every file goes into a temporary folder beside
 * the target, which replaces the target by rename only once every file is written. A lock beside
 * the target (`.<name>.lock`, holding the writer's pid) makes a second writer fail with a message
 * instead of silently winning; a lock whose process is gone is taken over by one writer only. On
 * any failure the temporary folder is removed and the previous output is left as it was, and the
 * error says so.
 *
 * The render replaces its folder as a whole, so it writes only where it owns everything: a new or
 * empty folder, or one holding its marker (RENDER_MARKER, written with every render); never the
 * repository or a folder that contains it, never a mount point (it cannot be renamed). A symlinked
 * folder stays a symlink: the render replaces its target.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import { REPO_ROOT } from "../../config/stacks";

/** The file every render writes into its folder: a folder holding it may be replaced by the next render. */
export const RENDER_MARKER = ".rendered";
const MARKER_TEXT = "Written by npm run render (cli/render.ts). The next render replaces this whole folder.\n";

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

const readOwner = (file: string): number | undefined => {
    try {
        return Number(fs.readFileSync(file, "utf8").trim());
    } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
        throw err;
    }
};
const held = (owner: number | undefined) => owner !== undefined && Number.isInteger(owner) && owner > 0 && owner !== process.pid && alive(owner);

/**
 * Takes the lock of `outDir` or throws naming the process that holds it. Returns the release.
 * A stale lock (its process is gone) is moved aside by rename, which only one taker can do to the
 * same file; a taker that finds it moved a live lock instead (taken over by another render between
 * its read and its rename) puts it back and fails. `hooks.staleSeen` lets tests run in that window.
 */
export function lockOutput(outDir: string, hooks: { staleSeen?: () => void } = {}): () => void {
    const lock = path.join(path.dirname(outDir), `.${path.basename(outDir)}.lock`);
    const busy = (owner: number) => new OutputError(`another render (pid ${owner}) is writing ${outDir}; nothing was written. Wait for it to finish (or remove ${lock} if no render is running)`);
    for (let attempt = 0; attempt < 3; attempt++) {
        try {
            fs.writeFileSync(lock, `${process.pid}\n`, { flag: "wx" });
            return () => fs.rmSync(lock, { force: true });
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw new OutputError(`cannot take the lock ${lock}: ${describe(err)}`);
        }
        const owner = readOwner(lock);
        if (held(owner)) throw busy(owner!);
        hooks.staleSeen?.();
        const moved = `${lock}.stale-${process.pid}-${crypto.randomBytes(4).toString("hex")}`;
        try {
            fs.renameSync(lock, moved);
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code === "ENOENT") continue; // another taker moved it first
            throw new OutputError(`cannot take over the stale lock ${lock}: ${describe(err)}`);
        }
        const movedOwner = readOwner(moved);
        if (held(movedOwner)) {
            // A live lock, taken between the read and the rename: give it back to its owner.
            try {
                fs.linkSync(moved, lock);
            } catch {
                /* a third render holds the lock now; the owner keeps running without its file */
            }
            fs.rmSync(moved, { force: true });
            throw busy(movedOwner!);
        }
        fs.rmSync(moved, { force: true }); // its writer is gone
    }
    throw new OutputError(`cannot take the lock of ${outDir}`);
}

/** Whether `dir` is a mount point (its own entry in /proc/self/mountinfo, or another device than its parent). */
function isMountPoint(dir: string): boolean {
    try {
        if (fs.statSync(dir).dev !== fs.statSync(path.dirname(dir)).dev) return true;
    } catch {
        return false;
    }
    try {
        const unescape = (m: string) => m.replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8)));
        return fs.readFileSync("/proc/self/mountinfo", "utf8").split("\n").some((l) => l.split(" ")[4] !== undefined && unescape(l.split(" ")[4]) === dir);
    } catch {
        return false;
    }
}

/**
 * The folder a render may replace for `--out outDir`, resolved through a symlink (the link stays,
 * its target is replaced), or an OutputError saying why not: the repository or a folder holding
 * it, a mount point, a file, or a non-empty folder without the render's marker.
 */
export function checkOutTarget(outDir: string, repoRoot = REPO_ROOT): string {
    let target = path.resolve(outDir);
    try {
        if (fs.lstatSync(target).isSymbolicLink()) target = fs.realpathSync(target);
    } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw new OutputError(`cannot read ${target}: ${describe(err)}`);
    }
    let repo = path.resolve(repoRoot);
    try {
        repo = fs.realpathSync(repo);
    } catch {
        /* compared as given */
    }
    const shown = path.resolve(outDir);
    if (repo === target || repo.startsWith(target.endsWith(path.sep) ? target : target + path.sep) || path.dirname(target) === target)
        throw new OutputError(`--out ${shown} is the repository or a folder that contains it; the render replaces its folder as a whole, so give a folder of its own (default: out/<stack>)`);
    if (!fs.existsSync(target)) return target;
    if (!fs.statSync(target).isDirectory()) throw new OutputError(`${target} exists and is not a folder`);
    if (isMountPoint(target))
        throw new OutputError(`--out ${shown} is a mount point: the render replaces its folder by renaming, which a mount point cannot be; give a folder inside it (e.g. ${path.join(shown, "render")})`);
    const entries = fs.readdirSync(target);
    if (entries.length > 0 && !entries.includes(RENDER_MARKER)) {
        const some = entries.sort().slice(0, 5).join(", ") + (entries.length > 5 ? `, ... (${entries.length} entries)` : "");
        throw new OutputError(
            `--out ${shown} holds files that no render wrote (${some}) and no ${RENDER_MARKER} marker; the render replaces its folder as a whole, so it writes only to a new or empty folder or to one a previous render wrote`,
        );
    }
    return target;
}

/**
 * With the lock held: leftovers of a killed render beside `target` are removed. A previous output
 * moved aside (`.tmp-*.old`) while the target is missing was caught mid-swap: it is put back first.
 */
function cleanLeftovers(target: string): void {
    const dir = path.dirname(target);
    const prefix = `.${path.basename(target)}.tmp-`;
    const leftovers = fs.readdirSync(dir).filter((e) => e.startsWith(prefix));
    const aside = leftovers.find((e) => e.endsWith(".old"));
    if (aside && !fs.existsSync(target)) fs.renameSync(path.join(dir, aside), target);
    for (const e of leftovers) fs.rmSync(path.join(dir, e), { recursive: true, force: true });
}

/**
 * Writes `files` (relative path -> text) as the whole content of `outDir`, atomically: the folder
 * afterwards holds exactly these files, or (on any error) exactly what it held before.
 */
export function writeOutputAtomically(outDir: string, files: Record<string, string>, io: OutputIo = defaultIo, opts: { lockHeld?: boolean } = {}): void {
    let target: string;
    try {
        target = checkOutTarget(outDir);
    } catch (err) {
        throw err instanceof OutputError ? new OutputError(`${err.message}; nothing was written`) : err;
    }
    const untouched = fs.existsSync(target) ? `the previous output in ${target} is untouched` : `nothing was written to ${target}`;
    try {
        ensureDir(path.dirname(target));
    } catch (err) {
        throw new OutputError(`${err instanceof Error ? err.message : err}; ${untouched}`);
    }
    const release = opts.lockHeld ? () => undefined : lockOutput(target);
    let tmp: string | undefined;
    try {
        cleanLeftovers(target);
        try {
            // mkdir, not mkdtemp: the folder's mode follows the umask (mkdtemp makes it 0700).
            const name = path.join(path.dirname(target), `.${path.basename(target)}.tmp-${process.pid}-${crypto.randomBytes(4).toString("hex")}`);
            fs.mkdirSync(name);
            tmp = name;
        } catch (err) {
            throw new OutputError(`cannot create a temporary folder beside ${target}: ${describe(err)}; ${untouched}`);
        }
        for (const [file, text] of Object.entries({ ...files, [RENDER_MARKER]: MARKER_TEXT })) {
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
    let target = path.resolve(outDir);
    try {
        target = checkOutTarget(target);
        ensureDir(path.dirname(target));
        const release = lockOutput(target);
        try {
            cleanLeftovers(target);
        } catch (err) {
            release();
            throw err;
        }
        return release;
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
