/**
 * Takes the `images-lock` artifact of the pull request's `diff` job into a credentialed job, as data:
 *
 *   npm run -s images:artifact -- <download folder> <destination file>
 *
 * The artifact was written by a job that ran the pull request's code and its dependencies' install
 * scripts, so it may hold anything (upload-artifact uploads every file under a path it is given).
 * It is downloaded outside the workspace (${{ runner.temp }}); this accepts exactly one regular
 * file named images.lock.json (no symlink, no folder, no other entry), at most 1 MiB, that parses
 * as the lock's schema (config/imageLock.ts imageLockProblems), and only then writes it to the
 * destination (a temporary file in the destination's folder, renamed in). Anything else: a clear
 * error naming the file and what was expected, exit 1, the destination left as it was.
 */
import * as fs from "fs";
import * as path from "path";
import { imageLockProblems } from "../../config/imageLock";

export const LOCK_NAME = "images.lock.json";
export const MAX_BYTES = 1 << 20;

/** The validated lock text from the download folder; throws with every reason it is refused. */
export function readLockArtifact(dir: string): string {
    let entries: string[];
    try {
        if (!fs.lstatSync(dir).isDirectory()) throw new Error("not a folder");
        entries = fs.readdirSync(dir);
    } catch (e) {
        throw new Error(`${dir}: the downloaded artifact folder cannot be read (${(e as Error).message}); expected a folder holding only ${LOCK_NAME}`);
    }
    if (entries.length !== 1 || entries[0] !== LOCK_NAME) {
        throw new Error(`${dir}: the artifact holds ${JSON.stringify(entries.sort())}; expected exactly one file, ${LOCK_NAME}`);
    }
    const file = path.join(dir, LOCK_NAME);
    const st = fs.lstatSync(file);
    if (!st.isFile()) throw new Error(`${file}: is a ${st.isSymbolicLink() ? "symbolic link" : st.isDirectory() ? "folder" : "special file"}; expected a regular file`);
    if (st.size > MAX_BYTES) throw new Error(`${file}: ${st.size} bytes; expected at most ${MAX_BYTES} (an image lock)`);
    const text = fs.readFileSync(file, "utf8");
    let data: unknown;
    try {
        data = JSON.parse(text);
    } catch (e) {
        throw new Error(`${file}: not JSON (${(e as Error).message}); expected {"images": [{reference, digest, source, date}, ...]}`);
    }
    const problems = imageLockProblems(data);
    if (problems.length > 0) throw new Error(`${file}: not an image lock:\n${problems.map((p) => `  - ${p}`).join("\n")}`);
    return `${JSON.stringify(data, null, 2)}\n`;
}

/** Validates the artifact and writes it to `dest` by rename; `dest` is untouched on any failure. */
export function installLockArtifact(dir: string, dest: string): number {
    const text = readLockArtifact(dir);
    const tmp = path.join(path.dirname(dest), `.${path.basename(dest)}.${process.pid}.tmp`);
    try {
        fs.writeFileSync(tmp, text, { flag: "wx" });
        fs.renameSync(tmp, dest);
    } finally {
        fs.rmSync(tmp, { force: true });
    }
    return (JSON.parse(text) as { images: unknown[] }).images.length;
}

function main(argv: string[]): number {
    const [dir, dest, ...rest] = argv;
    if (!dir || !dest || rest.length > 0) {
        console.error("usage: images-lock-artifact.ts <download folder> <destination images.lock.json>");
        return 2;
    }
    try {
        const n = installLockArtifact(dir, dest);
        console.log(`${dest}: ${n} image records from the artifact (one regular file, schema checked)`);
        return 0;
    } catch (e) {
        console.error(`::error::${(e as Error).message.split("\n").join("%0A")}`);
        return 1;
    }
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
