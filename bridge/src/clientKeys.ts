/**
 * The client API keys: a file (a mounted Secret key), one key a line, blank lines and lines
 * starting with # ignored. Checked at start (a file the bridge cannot use stops it, naming the file
 * and the line); read again whenever its modification time, size or inode changes, so a rotated
 * Secret takes effect when the kubelet updates the mounted file, without a restart. Only a regular
 * file is read (opened without blocking, so a FIFO or a device cannot stall the bridge), at most
 * 1 MiB. A key is what a client can send in `Authorization: Bearer <key>`: printable ASCII without
 * spaces (RFC 6750's token characters); a line that is not such a key is named by its number (never
 * its text) and ignored. Keys are compared as SHA-256 digests in constant time.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import { ENV_NAMES } from "./settings";

const MAX_BYTES = 1024 * 1024;
/** RFC 6750 b64token. */
const TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;

export class KeysFileError extends Error {}

interface Parsed {
    digests: Buffer[];
    /** Problems with lines, by line number (never the line's text: it may be a key). */
    problems: string[];
}

/** The file's keys; a file that is not a readable regular file, too large, or without a key throws KeysFileError. */
export function readKeysFile(file: string): Parsed {
    const where = `${ENV_NAMES.apiKeysFile} ${file}`;
    let fd: number;
    try {
        fd = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    } catch (e) {
        throw new KeysFileError(`${where}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; expected a readable file with one key a line`);
    }
    let text: string;
    try {
        const st = fs.fstatSync(fd);
        if (!st.isFile()) throw new KeysFileError(`${where}: is a ${kind(st)}, not a regular file; expected a file with one key a line`);
        if (st.size > MAX_BYTES) throw new KeysFileError(`${where}: ${st.size} bytes; expected at most ${MAX_BYTES}`);
        text = fs.readFileSync(fd, "utf8");
    } finally {
        fs.closeSync(fd);
    }
    const digests: Buffer[] = [];
    const problems: string[] = [];
    text.split(/\r?\n/).forEach((line, i) => {
        const key = line.trim();
        if (!key || key.startsWith("#")) return;
        if (TOKEN.test(key)) digests.push(digest(key));
        else problems.push(`line ${i + 1}: not a key a client can send (expected printable ASCII letters, digits and - . _ ~ + / =, no spaces)`);
    });
    if (digests.length === 0) throw new KeysFileError(`${where}: holds no usable key${problems.length ? ` (${problems.join("; ")})` : ""}; expected one key a line`);
    return { digests, problems };
}

function kind(st: fs.Stats): string {
    if (st.isDirectory()) return "directory";
    if (st.isFIFO()) return "FIFO";
    if (st.isSocket()) return "socket";
    if (st.isCharacterDevice() || st.isBlockDevice()) return "device";
    return "special file";
}

export class ClientKeys {
    private stamp = "";
    private digests: Buffer[] = [];

    /** Reads the file at once: a file the bridge cannot use, or a line that is not a key, throws KeysFileError (the start stops). */
    constructor(private readonly file: string, private readonly log: (line: string) => void = (l) => console.error(l)) {
        const parsed = readKeysFile(file);
        if (parsed.problems.length) throw new KeysFileError(`${ENV_NAMES.apiKeysFile} ${file}: ${parsed.problems.join("; ")}`);
        this.digests = parsed.digests;
        this.stamp = this.statStamp() ?? "";
    }

    private statStamp(): string | undefined {
        try {
            const st = fs.statSync(this.file);
            return `${st.mtimeMs}:${st.size}:${st.ino}:${st.mode}`;
        } catch {
            return undefined;
        }
    }

    /** The current keys' digests; a file that became unusable admits nobody (and says so once per change). */
    private current(): Buffer[] {
        const stamp = this.statStamp() ?? "missing";
        if (stamp === this.stamp) return this.digests;
        this.stamp = stamp;
        try {
            const parsed = readKeysFile(this.file);
            for (const p of parsed.problems) this.log(`model bridge: ${ENV_NAMES.apiKeysFile} ${this.file}: ${p}; that line is ignored`);
            this.digests = parsed.digests;
        } catch (e) {
            this.log(`model bridge: ${(e as Error).message}; every request is refused until the file is fixed`);
            this.digests = [];
        }
        return this.digests;
    }

    /** The presented key if it is one of the current keys, else undefined. */
    check(authorization: string | undefined): string | undefined {
        const m = /^Bearer +(\S+) *$/i.exec(authorization ?? "");
        if (!m) return undefined;
        const d = digest(m[1]);
        let ok = false;
        for (const k of this.current()) if (crypto.timingSafeEqual(k, d)) ok = true;
        return ok ? m[1] : undefined;
    }
}

const digest = (key: string) => crypto.createHash("sha256").update(key).digest();
