/**
 * The image lock (images.lock.json at the repository root): the one place that says which digest an
 * image reference runs as, and where that digest was verified. One record per image: the reference
 * as the configuration writes it (registry/repository:tag, no digest), its digest, the source it was
 * read from (a registry answer of `npm run images:lock`, or a published record such as the
 * docker-library repo-info file at a commit) and the date.
 *
 * The program reads it when it loads the configuration: a digest written in a stack file must be the
 * recorded digest of its reference, and in prod every image pinned by tag runs as
 * `<reference>@<recorded digest>`. A digest nobody verified is never written: where none is recorded
 * the deploy pipeline resolves the tag at the registry before `pulumi up` (tools/images/lock.ts).
 */
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";

export interface ImageRecord {
    reference: string;
    digest: string;
    source: string;
    date: string;
}

export const IMAGES_LOCK_FILE = path.resolve(__dirname, "..", "images.lock.json");

/**
 * The offline render's stand-in for a digest no record gives (a value of the right shape, like the
 * render's secret placeholders): never written to a committed file, never deployable.
 */
export const PLACEHOLDER_DIGEST = `sha256:${"0".repeat(64)}`;

/** require: a prod tag without a record is a problem (pulumi up); placeholder: the offline render's stand-in; tag: left as the tag (gen:gitops). */
export type DigestMode = "require" | "placeholder" | "tag";

/** The render harness's setting (never a stack file's): placeholder digests for unrecorded prod tags. */
export const RENDER_DIGEST_MODE_KEY = "render:imageDigests";

const DIGEST = /^sha256:[0-9a-f]{64}$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const REFERENCE = /^[a-z0-9.-]+(:\d+)?\/[a-z0-9._/-]+:[\w][\w.-]{0,127}$/;

export class ImageLockError extends Error {
    constructor(readonly file: string, readonly problems: string[]) {
        super(`${file}: ${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was created.\n${problems.map((p) => `  - ${p}`).join("\n")}`);
        this.name = "ImageLockError";
    }
}

/** Checks the parsed file: every record complete and well formed, one record per reference. */
export function imageLockProblems(data: unknown): string[] {
    if (typeof data !== "object" || data === null || !Array.isArray((data as { images?: unknown }).images))
        return ['expected an object with "images": a list of {reference, digest, source, date}'];
    const problems: string[] = [];
    const seen = new Set<string>();
    (data as { images: unknown[] }).images.forEach((r, i) => {
        const at = `images[${i}]`;
        if (typeof r !== "object" || r === null) return void problems.push(`${at}: expected {reference, digest, source, date}`);
        const rec = r as Record<string, unknown>;
        for (const k of Object.keys(rec)) if (!["reference", "digest", "source", "date"].includes(k)) problems.push(`${at}.${k}: unknown key; expected only reference, digest, source, date`);
        if (typeof rec.reference !== "string" || !REFERENCE.test(rec.reference))
            problems.push(`${at}.reference: ${JSON.stringify(rec.reference)} is not an image reference with registry and tag and no digest, such as "docker.io/library/postgres:15.10"`);
        else if (seen.has(rec.reference)) problems.push(`${at}.reference: ${rec.reference} has a record already`);
        else seen.add(rec.reference);
        if (typeof rec.digest !== "string" || !DIGEST.test(rec.digest)) problems.push(`${at}.digest: ${JSON.stringify(rec.digest)} is not sha256:<64 hex>`);
        else if (rec.digest === PLACEHOLDER_DIGEST) problems.push(`${at}.digest: the offline render's placeholder is not a digest`);
        else if (typeof rec.reference === "string" && selfHashes(rec.reference).includes(rec.digest))
            problems.push(`${at}.digest: is the SHA-256 of the reference string itself, not of an image manifest`);
        if (typeof rec.source !== "string" || rec.source.trim().length < 10) problems.push(`${at}.source: expected where the digest was verified (registry answer or published record)`);
        if (typeof rec.date !== "string" || !DATE.test(rec.date) || Number.isNaN(Date.parse(rec.date))) problems.push(`${at}.date: ${JSON.stringify(rec.date)} is not a date YYYY-MM-DD`);
    });
    return problems;
}

/** The digests a reference string hashes to, with and without its default registry prefixes. */
export function selfHashes(reference: string): string[] {
    const bare = reference.replace(/@sha256:[0-9a-f]{64}$/, "");
    const forms = new Set([bare, bare.replace(/^docker\.io\/library\//, ""), bare.replace(/^docker\.io\//, ""), `${bare}\n`]);
    return [...forms].map((f) => `sha256:${createHash("sha256").update(f).digest("hex")}`);
}

export function readImageLock(file = IMAGES_LOCK_FILE): ImageRecord[] {
    let data: unknown;
    try {
        data = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch (e) {
        throw new ImageLockError(file, [(e as NodeJS.ErrnoException).code === "ENOENT" ? "the image lock is missing" : `not valid JSON: ${(e as Error).message}`]);
    }
    const problems = imageLockProblems(data);
    if (problems.length > 0) throw new ImageLockError(file, problems);
    return (data as { images: ImageRecord[] }).images;
}

export const withoutDigest = (ref: string) => ref.replace(/@sha256:[0-9a-f]{64}$/, "");
export const digestOf = (ref: string) => /@(sha256:[0-9a-f]{64})$/.exec(ref)?.[1];

export type Resolution = { ref: string; placeholder?: boolean } | { problem: string; expected: string };

/**
 * The reference an image key runs as. A written digest must be its reference's record; in prod a
 * tag runs as the recorded digest (or, by mode, the placeholder / the tag itself).
 */
export function resolveImage(ref: string, prod: boolean, records: ImageRecord[], mode: DigestMode): Resolution {
    const bare = withoutDigest(ref);
    const record = records.find((r) => r.reference === bare);
    const digest = digestOf(ref);
    if (digest) {
        if (!record) return { problem: `the digest ${digest} has no record in images.lock.json`, expected: "a digest verified and recorded with its source (npm run images:lock), or the tag alone" };
        if (record.digest !== digest) return { problem: `the digest ${digest} is not the recorded ${record.digest} of ${bare}`, expected: "the digest images.lock.json records for this reference, or the tag alone" };
        return { ref };
    }
    if (!prod) return { ref };
    if (record) return { ref: `${bare}@${record.digest}` };
    if (mode === "placeholder") return { ref: `${bare}@${PLACEHOLDER_DIGEST}`, placeholder: true };
    if (mode === "tag") return { ref };
    return {
        problem: `prod runs images by digest and images.lock.json has no digest for ${bare}`,
        expected: "a record of its digest: run `npm run images:lock -- --stack <stack>` where the registry is reachable (the deploy pipeline does before pulumi up)",
    };
}

/**
 * Every sha256 digest in a text and whether it is recorded: an `<image>@sha256:…` must be the record
 * of that image, a bare `sha256:…` must be some record's digest, and none may be the hash of its own
 * reference string. Returns one problem per offending digest.
 */
export function unrecordedDigests(text: string, where: string, records: ImageRecord[]): string[] {
    const problems: string[] = [];
    const pinned = /([a-z0-9][\w.:/-]*)@(sha256:[0-9a-f]{64})/g;
    const covered = new Set<number>();
    for (const m of text.matchAll(pinned)) {
        const [, reference, digest] = m;
        covered.add(m.index! + m[0].length - digest.length);
        if (selfHashes(reference).includes(digest)) problems.push(`${where}: ${reference}@${digest} is the SHA-256 of the reference string itself`);
        else if (!records.some((r) => r.reference === reference && r.digest === digest)) problems.push(`${where}: ${reference}@${digest} has no record in images.lock.json`);
    }
    for (const m of text.matchAll(/sha256:[0-9a-f]{64}/g)) {
        if (covered.has(m.index!)) continue;
        if (!records.some((r) => r.digest === m[0])) problems.push(`${where}: ${m[0]} has no record in images.lock.json`);
    }
    return problems;
}
