/**
 * The one place that reads stack configuration. `loadConfig` reads every key of the schema,
 * checks it, runs the cross-key rules, and returns one typed, frozen object; on any problem it
 * throws a ConfigError that lists every offending key before a single resource is registered.
 */
import * as pulumi from "@pulumi/pulumi";
import { flatten, isField, Schema } from "./schema";
import { schema } from "./stack";
import { crossChecks, isImageKey } from "./rules";
import type { Config, ConfigProblem } from "./rule";
import { DigestMode, IMAGES_LOCK_FILE, ImageRecord, readImageLock, RENDER_DIGEST_MODE_KEY, resolveImage } from "./imageLock";

export { schema } from "./stack";
export type { ConfigProblem } from "./rule";
export type StackConfig = Config & { readonly stack: string; readonly project: string };

export class ConfigError extends Error {
    constructor(readonly project: string, readonly problems: ConfigProblem[]) {
        super(
            `Invalid stack configuration: ${problems.length} problem${problems.length === 1 ? "" : "s"}; nothing was created.\n` +
                problems.map((p) => `  - ${project}:${p.key}: ${p.problem}; expected ${p.expected}`).join("\n"),
        );
        this.name = "ConfigError";
    }
}

/** Where raw values come from: the Pulumi runtime in a real run, a map in tests. */
export interface ConfigSource {
    readonly project: string;
    readonly stack: string;
    /** The raw value of `<project>:<key>` (a string, or parsed YAML/JSON), or undefined. */
    get(key: string): unknown;
    /** Every key the stack sets in the project's namespace, to catch misspelt keys. */
    keys(): string[];
    /** The image records (images.lock.json unless given). */
    imageRecords?(): ImageRecord[];
    /** What a prod tag without a record becomes (default require: a problem). */
    digestMode?: DigestMode;
}


export function pulumiSource(): ConfigSource {
    const project = pulumi.getProject();
    // Read once: the runtime parses its whole configuration on every getConfig call.
    const all = pulumi.runtime.allConfig();
    return {
        project,
        stack: pulumi.getStack(),
        get: (key) => all[`${project}:${key}`],
        keys: () => Object.keys(all).filter((k) => k.startsWith(`${project}:`)).map((k) => k.slice(project.length + 1)),
        digestMode: all[RENDER_DIGEST_MODE_KEY] === "placeholder" ? "placeholder" : "require",
    };
}

export function mapSource(project: string, stack: string, values: Record<string, unknown>, images: { records?: ImageRecord[]; digestMode?: DigestMode } = {}): ConfigSource {
    return {
        project,
        stack,
        get: (key) => values[key],
        keys: () => Object.keys(values),
        ...(images.records ? { imageRecords: () => images.records! } : {}),
        ...(images.digestMode ? { digestMode: images.digestMode } : {}),
    };
}

export function loadConfig(source: ConfigSource = pulumiSource()): StackConfig {
    const problems: ConfigProblem[] = [];
    const fields = flatten(schema);
    const known = new Set(fields.map((f) => f.key));
    const values = new Map<string, unknown>();
    for (const { key, field } of fields) {
        const raw = source.get(key);
        if (raw === undefined || raw === null) {
            if (field.default !== undefined) values.set(key, field.default);
            else if (!field.optional)
                problems.push({ key, problem: "is not set", expected: field.secret ? `${field.description}, set with \`pulumi config set --secret ${key}\`` : field.description });
            continue;
        }
        const length = rawLength(raw);
        if (length > MAX_VALUE_LENGTH) {
            problems.push({ key, problem: `is ${length} characters long${field.secret ? " (value not shown)" : ""}`, expected: `at most ${MAX_VALUE_LENGTH} characters: every value goes into an object of the cluster with others, and the API server's key store takes an object of at most 1.5 MiB (etcd's default --max-request-bytes)` });
            continue;
        }
        const checked = field.check(raw);
        if (checked.ok) values.set(key, checked.value);
        else problems.push({ key, problem: checked.problem, expected: checked.expected });
    }
    for (const key of source.keys()) {
        if (!known.has(key)) problems.push({ key, problem: "is not a key of this project", expected: suggest(key, known) });
    }
    // A key that failed its own check does not hide the cross-key problems of the others: the
    // rules run with its default, and what they say about a failed key (or by its name) is dropped.
    const failed = new Set(problems.map((p) => p.key));
    for (const { key, field } of fields) if (failed.has(key) && field.default !== undefined) values.set(key, field.default);
    problems.push(...resolveImages(source, fields, values, failed));
    const config = build(schema, [], values) as Config;
    // Keys come from the stack file as written ("a[0]", "b(c"): matched as text, never as a pattern.
    const escape = (k: string) => k.replace(/[.*+?^${}()|[\]\\/]/g, "\\$&");
    const mentionsFailed = (p: ConfigProblem) => [...failed].some((k) => p.key === k || new RegExp(`(?<![\\w])${escape(k)}(?![\\w])`).test(`${p.problem} ${p.expected}`));
    problems.push(...crossChecks(config, failed.size > 0).filter((p) => !mentionsFailed(p)));
    if (problems.length > 0) throw new ConfigError(source.project, problems);
    return deepFreeze({ ...config, stack: source.stack, project: source.project });
}

/** The longest value a key takes (1 MiB of text). */
export const MAX_VALUE_LENGTH = 2 ** 20;

/** The text length of a raw value: a string, or the JSON of a list or object. */
function rawLength(raw: unknown): number {
    if (typeof raw === "string") return raw.length;
    if (raw && typeof raw === "object") return JSON.stringify(raw)?.length ?? 0;
    return 0;
}

/** Each image key as it runs: a written digest checked against its record, prod tags by their recorded digest. */
function resolveImages(source: ConfigSource, fields: ReturnType<typeof flatten>, values: Map<string, unknown>, failed: Set<string>): ConfigProblem[] {
    const images = fields.filter(({ key, path }) => isImageKey(path) && !failed.has(key) && typeof values.get(key) === "string");
    if (images.length === 0) return [];
    let records: ImageRecord[];
    try {
        records = source.imageRecords ? source.imageRecords() : readImageLock(IMAGES_LOCK_FILE);
    } catch (e) {
        return [{ key: images[0].key, problem: `the image lock cannot be read: ${(e as Error).message}`, expected: "a valid images.lock.json" }];
    }
    const prod = values.get("environmentTier") === "prod";
    const problems: ConfigProblem[] = [];
    for (const { key } of images) {
        const r = resolveImage(values.get(key) as string, prod, records, source.digestMode ?? "require");
        if ("problem" in r) problems.push({ key, problem: r.problem, expected: r.expected });
        else values.set(key, r.ref);
    }
    return problems;
}

function build(node: Schema, path: string[], values: Map<string, unknown>): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [name, child] of Object.entries(node)) {
        const p = [...path, name];
        out[name] = isField(child) ? values.get(flatten({ [name]: child }, path)[0].key) : build(child as Schema, p, values);
    }
    return out;
}

function suggest(key: string, known: Set<string>): string {
    const lower = key.toLowerCase();
    const close = [...known].filter((k) => k.toLowerCase().includes(lower) || lower.includes(k.toLowerCase()) || editDistance(k.toLowerCase(), lower) <= 3);
    return close.length > 0 ? `one of the keys declared in Pulumi.yaml (did you mean ${close.slice(0, 3).join(", ")}?)` : "one of the keys declared in Pulumi.yaml";
}

function editDistance(a: string, b: string): number {
    const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array(b.length).fill(0)]);
    for (let j = 1; j <= b.length; j++) d[0][j] = j;
    for (let i = 1; i <= a.length; i++)
        for (let j = 1; j <= b.length; j++)
            d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] === b[j - 1] ? 0 : 1));
    return d[a.length][b.length];
}

function deepFreeze<T>(value: T): T {
    if (value && typeof value === "object" && !pulumi.Output.isInstance(value) && !Object.isFrozen(value)) {
        Object.freeze(value);
        for (const v of Object.values(value as object)) deepFreeze(v);
    }
    return value;
}
