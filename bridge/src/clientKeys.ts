/**
 * The client API keys: a file (a mounted Secret key), one key a line, blank lines and lines
 * starting with # ignored. It is read again whenever its modification time or size changes, so a
 * rotated Secret takes effect when the kubelet updates the mounted file, without a restart.
 * Keys are compared in constant time.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";

export class ClientKeys {
    private stamp = "";
    private digests: Buffer[] = [];

    constructor(private readonly file: string) {}

    /** The current keys' digests; an unreadable or empty file admits nobody (and says so once per change). */
    private current(): Buffer[] {
        let st: fs.Stats;
        try {
            st = fs.statSync(this.file);
        } catch (e) {
            if (this.stamp !== "missing") console.error(`model bridge: client keys file ${this.file}: ${(e as Error).message}; every request is refused`);
            this.stamp = "missing";
            this.digests = [];
            return this.digests;
        }
        const stamp = `${st.mtimeMs}:${st.size}:${st.ino}`;
        if (stamp !== this.stamp) {
            const keys = fs.readFileSync(this.file, "utf8").split(/\r?\n/).map((l) => l.trim()).filter((l) => l && !l.startsWith("#"));
            if (keys.length === 0) console.error(`model bridge: client keys file ${this.file} holds no key; every request is refused`);
            this.digests = keys.map(digest);
            this.stamp = stamp;
        }
        return this.digests;
    }

    /** The presented key if it is one of the current keys, else undefined. */
    check(authorization: string | undefined): string | undefined {
        const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
        if (!m) return undefined;
        const d = digest(m[1]);
        let ok = false;
        for (const k of this.current()) if (crypto.timingSafeEqual(k, d)) ok = true;
        return ok ? m[1] : undefined;
    }
}

const digest = (key: string) => crypto.createHash("sha256").update(key).digest();
