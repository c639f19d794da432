/**
 * npm run images:lock -- --stack <stack> [--lock FILE] [--markdown FILE] [--registry HOST=URL ...]
 *
 * Resolves every image tag the stack runs (each image key of the configuration: the stack file's value
 * or the default) to the digest its registry serves, and records it in images.lock.json (reference,
 * digest, source, date): the lock the program then runs prod from (config/imageLock.ts). The digest
 * is the SHA-256 of the manifest (or index) bytes the registry returns for the tag, checked against
 * its Docker-Content-Digest header; anonymous pull tokens are fetched as the registry's
 * WWW-Authenticate challenge says. Nothing is guessed: a tag that does not resolve stops the run with
 * every failure listed, and the lock is left as it was (written to a temporary file, renamed on success).
 * --markdown writes the lock's table (with what changed) for the pull request comment.
 * --registry maps a registry host to a base URL (tests: a fake registry on loopback).
 */
import { stackNameProblem } from "../../config/stacks";
import { createHash } from "crypto";
import * as fs from "fs";
import * as path from "path";
import { ImageRecord, IMAGES_LOCK_FILE, imageLockProblems, withoutDigest } from "../../config/imageLock";
import { isImageKey } from "../../config/rules";
import { flatten, schema } from "../../config/schemaIndex";
import { readStackValues } from "../../cli/harness/stackConfig";
import { recipeBaseImages } from "./recipes";

const ACCEPT = [
    "application/vnd.oci.image.index.v1+json",
    "application/vnd.docker.distribution.manifest.list.v2+json",
    "application/vnd.oci.image.manifest.v1+json",
    "application/vnd.docker.distribution.manifest.v2+json",
].join(", ");

/**
 * The image references a stack runs, tags only (a written digest is checked by the program itself),
 * and the base images of the recipes built here (recipes.ts), whose digests the builds take from the lock.
 */
export function stackImages(stack: string, root?: string): string[] {
    const values = readStackValues(stack, {}, root);
    const refs = flatten(schema)
        .filter(({ path: p }) => isImageKey(p))
        .map(({ key, field }) => {
            const raw = values.config[`${values.project}:${key}`];
            return typeof raw === "string" ? raw : (field.default as string | undefined);
        })
        .filter((r): r is string => typeof r === "string");
    return [...new Set([...refs.map(withoutDigest), ...recipeBaseImages()])].sort();
}

export interface ParsedRef {
    registry: string;
    repository: string;
    tag: string;
}

export function parseReference(ref: string): ParsedRef {
    const m = /^([a-z0-9.-]+(?::\d+)?)\/([a-z0-9._/-]+):([\w][\w.-]{0,127})$/.exec(ref);
    if (!m || !/[.:]/.test(m[1])) throw new Error(`${ref}: expected registry/repository:tag (the registry named, e.g. docker.io/library/postgres:15.10)`);
    return { registry: m[1], repository: m[2], tag: m[3] };
}

/** Docker Hub's API host; every other registry serves /v2/ on its own name. */
const apiBase = (registry: string, map: Record<string, string>) => map[registry] ?? `https://${registry === "docker.io" ? "registry-1.docker.io" : registry}`;

function challenge(header: string | null): { realm: string; service?: string; scope?: string } | undefined {
    if (!header || !/^Bearer\s/i.test(header)) return undefined;
    const params = Object.fromEntries([...header.slice(7).matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    return params.realm ? { realm: params.realm, service: params.service, scope: params.scope } : undefined;
}

/** One request of `ref`'s resolution: a network failure names the image, the address and the cause (not a bare "fetch failed"). */
async function request(ref: string, url: string, send: () => Promise<Response>): Promise<Response> {
    try {
        return await send();
    } catch (e) {
        const err = e as Error & { cause?: { code?: string; message?: string } };
        const why =
            err.name === "TimeoutError" || err.name === "AbortError"
                ? `no answer within 30 s (${err.name})`
                : err.cause?.message
                  ? `${err.cause.message}${err.cause.code && !err.cause.message.includes(`(${err.cause.code})`) ? ` (${err.cause.code})` : ""}`
                  : err.message;
        throw new Error(`${ref}: GET ${url} failed: ${why}`);
    }
}

export async function resolveDigest(ref: string, map: Record<string, string> = {}, fetchFn: typeof fetch = fetch): Promise<ImageRecord & { mediaType: string }> {
    const { registry, repository, tag } = parseReference(ref);
    const url = `${apiBase(registry, map)}/v2/${repository}/manifests/${tag}`;
    const get = (auth?: string) => request(ref, url, () => fetchFn(url, { headers: { Accept: ACCEPT, ...(auth ? { Authorization: auth } : {}) }, signal: AbortSignal.timeout(30_000) }));
    let res = await get();
    if (res.status === 401) {
        const c = challenge(res.headers.get("www-authenticate"));
        if (!c) throw new Error(`${ref}: ${url} answered 401 without a Bearer challenge`);
        const tokenUrl = new URL(c.realm);
        if (c.service) tokenUrl.searchParams.set("service", c.service);
        tokenUrl.searchParams.set("scope", c.scope ?? `repository:${repository}:pull`);
        const t = await request(ref, tokenUrl.href, () => fetchFn(tokenUrl, { signal: AbortSignal.timeout(30_000) }));
        if (!t.ok) throw new Error(`${ref}: the token service ${tokenUrl.origin}${tokenUrl.pathname} answered ${t.status}`);
        const body = (await t.json()) as { token?: string; access_token?: string };
        const token = body.token ?? body.access_token;
        if (!token) throw new Error(`${ref}: the token service gave no token`);
        res = await get(`Bearer ${token}`);
    }
    if (!res.ok) throw new Error(`${ref}: ${url} answered ${res.status}${res.status === 404 ? " (no such tag)" : ""}`);
    const bytes = Buffer.from(await res.arrayBuffer());
    const digest = `sha256:${createHash("sha256").update(bytes).digest("hex")}`;
    const header = res.headers.get("docker-content-digest");
    if (header && header !== digest) throw new Error(`${ref}: the manifest bytes hash to ${digest} but the registry names ${header}`);
    const mediaType = (res.headers.get("content-type") ?? "").split(";")[0] || "unknown media type";
    return {
        reference: ref,
        digest,
        mediaType,
        source: `registry ${registry}: GET /v2/${repository}/manifests/${tag} (${mediaType}), SHA-256 of the bytes${header ? " = Docker-Content-Digest" : ""}`,
        date: new Date().toISOString().slice(0, 10),
    };
}

export interface LockResult {
    records: ImageRecord[];
    changed: { reference: string; from?: string; to: string }[];
    failures: string[];
}

/** Resolves every reference; merges into the existing records (other references kept). */
export async function lockImages(refs: string[], existing: ImageRecord[], map: Record<string, string> = {}, fetchFn: typeof fetch = fetch): Promise<LockResult> {
    const byRef = new Map(existing.map((r) => [r.reference, r]));
    const changed: LockResult["changed"] = [];
    const failures: string[] = [];
    for (const ref of refs) {
        try {
            const { mediaType: _m, ...rec } = await resolveDigest(ref, map, fetchFn);
            const before = byRef.get(ref);
            if (before?.digest === rec.digest) continue; // the record (and its source) stays as first verified
            changed.push({ reference: ref, from: before?.digest, to: rec.digest });
            byRef.set(ref, rec);
        } catch (e) {
            failures.push((e as Error).message);
        }
    }
    const records = [...byRef.values()].sort((a, b) => (a.reference < b.reference ? -1 : 1));
    return { records, changed, failures };
}

export function lockMarkdown(stack: string, result: LockResult, refs: string[]): string {
    const inStack = new Set(refs);
    const lines = [
        `### Image digests of ${stack} (images.lock.json)`,
        "",
        result.changed.length === 0 ? "No digest changed." : `${result.changed.length} digest(s) new or changed:`,
        ...result.changed.map((c) => `- \`${c.reference}\`: ${c.from ? `\`${c.from}\` → ` : ""}\`${c.to}\``),
        "",
        "| image | digest | verified | date |",
        "|---|---|---|---|",
        ...result.records.filter((r) => inStack.has(r.reference)).map((r) => `| \`${r.reference}\` | \`${r.digest}\` | ${r.source} | ${r.date} |`),
        "",
    ];
    return lines.join("\n");
}

function writeAtomically(file: string, text: string) {
    const tmp = path.join(path.dirname(file), `.${path.basename(file)}.${process.pid}.tmp`);
    try {
        fs.writeFileSync(tmp, text);
        fs.renameSync(tmp, file);
    } finally {
        fs.rmSync(tmp, { force: true });
    }
}

export async function main(argv: string[], out: { write(s: string): unknown } = process.stdout, err: { write(s: string): unknown } = process.stderr, fetchFn: typeof fetch = fetch): Promise<number> {
    const usage = "usage: npm run images:lock -- --stack <stack> [--lock FILE] [--markdown FILE] [--registry HOST=URL ...]";
    let stack: string | undefined;
    let lockFile = IMAGES_LOCK_FILE;
    let markdown: string | undefined;
    const map: Record<string, string> = {};
    const given = new Set<string>();
    for (let i = 0; i < argv.length; i++) {
        const [a, v] = [argv[i], argv[i + 1]];
        if ((a === "--stack" || a === "--lock" || a === "--markdown") && given.has(a)) {
            err.write(`images:lock: ${a} is given twice\n${usage}\n`);
            return 2;
        }
        given.add(a);
        if (a === "--stack" && v) (stack = v), i++;
        else if (a === "--lock" && v) (lockFile = path.resolve(v)), i++;
        else if (a === "--markdown" && v) (markdown = path.resolve(v)), i++;
        else if (a === "--registry" && v && /^[^=]+=https?:\/\/\S+$/.test(v)) (map[v.slice(0, v.indexOf("="))] = v.slice(v.indexOf("=") + 1).replace(/\/$/, "")), i++;
        else {
            err.write(`images:lock: unexpected argument ${JSON.stringify(a)}\n${usage}\n`);
            return 2;
        }
    }
    if (!stack) {
        err.write(`images:lock: --stack is required\n${usage}\n`);
        return 2;
    }
    const problem = stackNameProblem(stack);
    if (problem) {
        err.write(`images:lock: ${problem}\n${usage}\n`);
        return 2;
    }
    let existing: ImageRecord[] = [];
    if (fs.existsSync(lockFile)) {
        const data = JSON.parse(fs.readFileSync(lockFile, "utf8"));
        const problems = imageLockProblems(data);
        if (problems.length > 0) {
            err.write(`images:lock: ${lockFile} is not a valid lock; nothing was changed:\n${problems.map((p) => `  - ${p}`).join("\n")}\n`);
            return 1;
        }
        existing = data.images;
    }
    const refs = stackImages(stack);
    const result = await lockImages(refs, existing, map, fetchFn);
    if (result.failures.length > 0) {
        err.write(`images:lock: ${result.failures.length} of ${refs.length} image(s) did not resolve; ${path.basename(lockFile)} was not changed:\n${result.failures.map((f) => `  - ${f}`).join("\n")}\n`);
        return 1;
    }
    writeAtomically(lockFile, JSON.stringify({ images: result.records }, null, 2) + "\n");
    if (markdown) writeAtomically(markdown, lockMarkdown(stack, result, refs));
    out.write(`images:lock: ${refs.length} image(s) of ${stack} resolved, ${result.changed.length} new or changed; wrote ${path.relative(process.cwd(), lockFile)}\n`);
    return 0;
}

if (require.main === module) {
    main(process.argv.slice(2)).then((code) => process.exit(code), (e) => {
        process.stderr.write(`images:lock: ${(e as Error).message}\n`);
        process.exit(1);
    });
}
