/**
 * Seeded mutation of JSON values (Kubernetes objects, constraint parameters) for the differential
 * run against gator: a field removed, set to null, replaced by a value seen under the same key
 * elsewhere, a list emptied or grown. The same seed gives the same mutants.
 */

export interface Rng {
    /** A float in [0, 1). */
    next(): number;
    /** An integer in [0, n). */
    int(n: number): number;
    pick<T>(items: readonly T[]): T;
}

/** mulberry32: small, fast, and enough for choosing mutations. */
export function seededRng(seed: number): Rng {
    let a = seed >>> 0;
    const next = () => {
        a = (a + 0x6d2b79f5) >>> 0;
        let t = a;
        t = Math.imul(t ^ (t >>> 15), t | 1);
        t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
        return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const int = (n: number) => Math.floor(next() * n);
    return { next, int, pick: (items) => items[int(items.length)] };
}

/** Values seen under each key name (list items under the list's key), without duplicates. */
export class ValuePool {
    private readonly byKey = new Map<string, Map<string, unknown>>();

    add(value: unknown, key = ""): void {
        if (key !== "") {
            let seen = this.byKey.get(key);
            if (!seen) this.byKey.set(key, (seen = new Map()));
            const text = JSON.stringify(value);
            if (text !== undefined && text.length <= 4000 && !seen.has(text)) seen.set(text, value);
        }
        if (Array.isArray(value)) for (const item of value) this.add(item, key);
        else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) this.add(v, k);
    }

    /** Values seen under `key` other than `current`. */
    others(key: string, current: unknown): unknown[] {
        const text = JSON.stringify(current);
        return [...(this.byKey.get(key)?.entries() ?? [])].filter(([t]) => t !== text).map(([, v]) => v);
    }
}

export type Path = (string | number)[];
export const showPath = (p: Path) => p.map((k) => (typeof k === "number" ? `[${k}]` : `.${k}`)).join("") || ".";

/** Every path inside `value` (not the root itself). */
export function pathsOf(value: unknown, at: Path = []): Path[] {
    const out: Path[] = [];
    if (Array.isArray(value)) value.forEach((v, i) => out.push([...at, i], ...pathsOf(v, [...at, i])));
    else if (value !== null && typeof value === "object") for (const [k, v] of Object.entries(value)) out.push([...at, k], ...pathsOf(v, [...at, k]));
    return out;
}

function get(root: unknown, path: Path): unknown {
    let v: any = root;
    for (const k of path) v = v?.[k];
    return v;
}

/** The key a path's value sits under (for a list item, the list's key). */
function keyOf(path: Path): string {
    for (let i = path.length - 1; i >= 0; i--) if (typeof path[i] === "string") return path[i] as string;
    return "";
}

export type Operation = "remove" | "null" | "replace" | "empty" | "grow";

export interface MutateOptions {
    /** Paths never touched (nor anything inside them), e.g. apiVersion, kind, metadata.name. */
    protect?: (path: Path) => boolean;
    /** Operations allowed (default: all). */
    operations?: readonly Operation[];
    /** How many operations to apply (1 to max, default 3). */
    maxOperations?: number;
}

export interface Mutant<T> {
    value: T;
    /** What was done, e.g. ["remove .spec.containers[0].resources"]. */
    operations: string[];
}

/** One mutant of `value` (a deep copy; `value` is left as it is). Undefined when nothing could be changed. */
export function mutate<T>(value: T, rng: Rng, pool: ValuePool, opts: MutateOptions = {}): Mutant<T> | undefined {
    const copy = structuredClone(value);
    const allowed = opts.operations ?? (["remove", "null", "replace", "empty", "grow"] as const);
    const count = 1 + rng.int(opts.maxOperations ?? 3);
    const done: string[] = [];
    for (let attempt = 0; done.length < count && attempt < count * 8; attempt++) {
        const paths = pathsOf(copy).filter((p) => !opts.protect?.(p));
        if (paths.length === 0) break;
        const path = rng.pick(paths);
        const op = rng.pick(allowed);
        const described = apply(copy, path, op, rng, pool);
        if (described) done.push(described);
    }
    return done.length > 0 ? { value: copy, operations: done } : undefined;
}

function apply(root: unknown, path: Path, op: Operation, rng: Rng, pool: ValuePool): string | undefined {
    const parent: any = get(root, path.slice(0, -1));
    const last = path[path.length - 1];
    const current = parent[last];
    const where = showPath(path);
    switch (op) {
        case "remove":
            if (Array.isArray(parent)) parent.splice(last as number, 1);
            else delete parent[last];
            return `remove ${where}`;
        case "null":
            if (current === null) return undefined;
            parent[last] = null;
            return `null ${where}`;
        case "replace": {
            const others = pool.others(keyOf(path), current);
            if (others.length === 0) return undefined;
            const v = structuredClone(rng.pick(others));
            parent[last] = v;
            return `replace ${where} with ${JSON.stringify(v).slice(0, 80)}`;
        }
        case "empty":
            if (Array.isArray(current) && current.length > 0) parent[last] = [];
            else if (current !== null && typeof current === "object" && !Array.isArray(current) && Object.keys(current).length > 0) parent[last] = {};
            else return undefined;
            return `empty ${where}`;
        case "grow": {
            if (!Array.isArray(current)) return undefined;
            const others = pool.others(keyOf(path), undefined);
            const source = current.length > 0 && (others.length === 0 || rng.next() < 0.5) ? rng.pick(current) : others.length > 0 ? rng.pick(others) : undefined;
            if (source === undefined) return undefined;
            current.push(structuredClone(source));
            return `grow ${where} with ${JSON.stringify(source).slice(0, 80)}`;
        }
    }
}
