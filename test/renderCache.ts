/**
 * A render cache shared by the test processes of one machine: each (stack, overrides, program)
 * is rendered once and stored as JSON under node_modules/.cache/ops-render, keyed by a hash of
 * every input of a render (the program's sources, stack files, Pulumi.yaml, package-lock.json).
 * `npm ci` empties node_modules, so a fresh install starts with a cold cache.
 *
 * A lock per key (a directory created atomically, holding the owner's pid) makes parallel test
 * processes render once: the others wait for the file. A lock whose owner is gone is taken over.
 *
 * The cached results hold the render's placeholder secrets (the offline render never sees real
 * ones); the files are written for the user only (0600) and never leave node_modules/.cache.
 */
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import type { RenderResult } from "../cli/harness/render";
import { alive } from "../cli/harness/output";

const REPO_ROOT = path.resolve(__dirname, "..");
export const CACHE_DIR = path.join(REPO_ROOT, "node_modules", ".cache", "ops-render");
/** Folders and files that are not inputs of a render. */
const NOT_INPUTS = new Set(["node_modules", ".git", "out", "test", "docs", ".tmp", ".ci", ".github"]);

let sourcesHash: string | undefined;

/** A hash of every file that can change a render (read once per process). */
export function inputsHash(root = REPO_ROOT): string {
    if (root === REPO_ROOT && sourcesHash) return sourcesHash;
    const hash = crypto.createHash("sha256");
    const walk = (dir: string) => {
        for (const entry of fs.readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
            if (dir === root && NOT_INPUTS.has(entry.name)) continue;
            const full = path.join(dir, entry.name);
            if (entry.isDirectory()) walk(full);
            else if (entry.isFile() && !entry.name.endsWith(".test.ts")) hash.update(path.relative(root, full)).update("\0").update(fs.readFileSync(full)).update("\0");
        }
    };
    walk(root);
    // The cache format itself: a change here must not reuse old entries.
    hash.update(fs.readFileSync(__filename));
    const digest = hash.digest("hex");
    if (root === REPO_ROOT) sourcesHash = digest;
    return digest;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Takes the lock directory `lock`; waits while a live process holds it, takes over a dead one's. */
async function acquire(lock: string): Promise<void> {
    for (;;) {
        try {
            fs.mkdirSync(lock);
            fs.writeFileSync(path.join(lock, "pid"), String(process.pid));
            return;
        } catch (err) {
            if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
        }
        let owner = NaN;
        try {
            owner = Number(fs.readFileSync(path.join(lock, "pid"), "utf8"));
        } catch {
            // the owner has made the directory but not yet written its pid
        }
        if (Number.isInteger(owner) && !alive(owner)) fs.rmSync(lock, { recursive: true, force: true });
        else await sleep(50);
    }
}

export interface CachedRenderOptions {
    stack: string;
    overrides: Record<string, unknown>;
    /** The renderer (the harness's render, loaded only on a cache miss). */
    render: () => Promise<RenderResult>;
    cacheDir?: string;
    root?: string;
}

/** The render of (stack, overrides) from the cache, or rendered now and stored for the next process. */
export async function cachedRender(opts: CachedRenderOptions): Promise<RenderResult> {
    if (process.env.OPS_RENDER_CACHE === "off") return opts.render();
    const dir = opts.cacheDir ?? CACHE_DIR;
    const key = crypto.createHash("sha256").update(inputsHash(opts.root)).update(JSON.stringify([opts.stack, opts.overrides])).digest("hex").slice(0, 32);
    const file = path.join(dir, `${opts.stack}-${key}.json`);
    const read = (): RenderResult | undefined => {
        try {
            return JSON.parse(fs.readFileSync(file, "utf8")) as RenderResult;
        } catch {
            return undefined;
        }
    };
    const hit = read();
    if (hit) return hit;
    fs.mkdirSync(dir, { recursive: true, mode: 0o700 });
    const lock = `${file}.lock`;
    await acquire(lock);
    try {
        const again = read();
        if (again) return again;
        const result = await opts.render();
        const tmp = `${file}.${process.pid}.tmp`;
        fs.writeFileSync(tmp, JSON.stringify(result), { mode: 0o600 });
        fs.renameSync(tmp, file);
        return result;
    } finally {
        fs.rmSync(lock, { recursive: true, force: true });
    }
}
