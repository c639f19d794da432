/**
 * Rego values, for policies compiled from OPA's plan IR to JavaScript (../plan/compile.ts), the
 * Wasm host's built-ins (../wasm/value.ts reads a module's values into these) and the TypeScript
 * templates' helpers. Kept as JavaScript values so that the review and data.inventory are read
 * where they are, never serialised: null, booleans, numbers, strings and arrays as themselves;
 * an object of the input or data as a plain object (never changed); an object the policy builds
 * as RegoObject (any key); a set as RegoSet. A local that is not defined is `undefined`.
 *
 * The order of values, and so the order in which objects and sets are scanned, is OPA's
 * (ast.Compare): null < booleans < numbers < strings < arrays < objects < sets; objects and sets
 * iterate in their keys' order, as topdown's do (ast object/set Iter use sorted keys).
 */

import * as text from "./text";

// Taken once as a plain function: some TypeScript runners give a module's exports through getters, one call each.
const { compareStrings, goFloatText } = text;
const hasOwn = Object.prototype.hasOwnProperty;

type Primitive = null | boolean | number | string | bigint;

/**
 * Numbers. A Rego number is a JavaScript number but for an integer OPA writes as its digits (an
 * integer the policy computes, a literal, a built-in's result) of at least 1e6 in magnitude: a
 * bigint (exact beyond 2^53, as OPA's). A number of Gatekeeper's input (the review, the
 * parameters, data.inventory) is a Go float64, which OPA writes as Go does (1000000 as 1e+06):
 * the number as it is. The two are equal, ordered and hashed as numbers; they differ where OPA
 * prints them (numberText; sprintf, ./sprintf.ts).
 */
export function isBigNumber(v: unknown): boolean {
    return typeof v === "bigint" || (typeof v === "number" && Number.isInteger(v) && (v >= 1e6 || v <= -1e6));
}

/** OPA's text of a number: a bigint's digits, a float64 of at least 1e6 as Go writes it (1e+06), else JavaScript's. */
export function numberText(v: number | bigint | NumberText): string {
    if (typeof v === "bigint") return v.toString();
    if (typeof v === "object") return v.text;
    return isBigNumber(v) ? goFloatText(v) : String(v);
}

/**
 * A number of the Wasm host whose OPA text is not numberText of its value (a literal `1.0`,
 * units.parse's `0.0010000000`): kept as that text, which sprintf reads (`1.0` is a float64 to
 * %d) and prints. Ordered as a number (valueOf); the compiled plans never hold one.
 */
export class NumberText {
    constructor(readonly text: string) {}
    valueOf(): number {
        return Number(this.text);
    }
}

/** A number from OPA's text of it: digits as computedInteger, other text as a float64; `exact`: as NumberText where that would print otherwise. */
export function numberFromText(text: string, exact = false): number | bigint | NumberText {
    const n = /^-?\d+$/.test(text) ? computedInteger(text) : Number(text);
    return !exact || numberText(n) === text ? n : new NumberText(text);
}

/** The other representation of an integer of at least 1e6 (a set holding one finds the other). */
function otherForm(v: number | bigint): number | bigint {
    return typeof v === "bigint" ? Number(v) : Number.isSafeInteger(v) ? BigInt(v) : v;
}

/** A computed number as the policy keeps it: an integer of at least 1e6 in magnitude as a bigint (OPA writes its digits). */
export function computedNumber(n: number): number | bigint {
    return Number.isInteger(n) && (n >= 1e6 || n <= -1e6) && Number.isFinite(n) ? BigInt(n) : n;
}

/** An integer's text as the policy keeps it: of at least 1e6 in magnitude a bigint, else a number. */
export function computedInteger(text: string): number | bigint {
    const n = BigInt(text);
    return n >= 1_000_000n || n <= -1_000_000n ? n : Number(n);
}

/** A number's value as a float64. */
export function numberValue(v: number | bigint): number {
    return typeof v === "bigint" ? Number(v) : v;
}

/**
 * A structural hash of a value (equal values, equal hashes), by which sets and built objects
 * find composite members; members of one hash are told apart by equality. A value the policy
 * builds keeps its hash until it changes; the input's are hashed when needed (a table of them
 * kept per object costs the garbage collector more than hashing again).
 */
function hashOf(v: unknown): number {
    switch (typeof v) {
        case "string": {
            // Every character of a string of up to 512 (messages differ anywhere); of a longer one, 512 spread over it.
            let h = Math.imul(0x811c9dc5 ^ v.length, 0x01000193);
            const step = v.length <= 512 ? 1 : Math.floor(v.length / 512);
            for (let i = 0; i < v.length; i += step) h = Math.imul(h ^ v.charCodeAt(i), 0x01000193);
            return h >>> 0;
        }
        case "number":
            return Number.isInteger(v) ? (v | 0) ^ 0x5bd1e995 : hashOf(String(v));
        case "bigint":
            return hashOf(Number(v));
        case "boolean":
            return v ? 0x2545f491 : 0x9e3779b9;
    }
    if (v === null) return 0x27d4eb2d;
    // Values the policy builds keep their own hash (until they change); the input's, in a table.
    if (v instanceof RegoObject || v instanceof RegoSet) return v.hash();
    let h: number;
    if (Array.isArray(v)) {
        h = 0x3c6ef372;
        for (let i = 0; i < v.length; i++) h = Math.imul(h ^ hashOf(v[i]), 0x01000193);
    } else {
        // The entries' hashes summed: independent of the keys' order, so no sort.
        h = 0x6a09e667;
        const o = v as Record<string, unknown>;
        for (const k in o) if (hasOwn.call(o, k) && o[k] !== undefined) h = (h + entryHash(k, o[k])) | 0;
    }
    return h >>> 0;
}
const entryHash = (k: unknown, v: unknown) => (Math.imul(hashOf(k) ^ 0x27d4eb2f, 0x01000193) + hashOf(v)) | 0;

function isPrimitive(v: unknown): v is Primitive {
    return v === null || typeof v !== "object";
}

/** Sorts a list in place: by insertion while short (Array.prototype.sort allocates a work list each call), else by sort. */
export function sortInPlace<T>(list: T[], cmp: (a: T, b: T) => number): T[] {
    if (list.length > 16) return list.sort(cmp);
    for (let i = 1; i < list.length; i++) {
        const x = list[i];
        let j = i - 1;
        while (j >= 0 && cmp(list[j], x) > 0) {
            list[j + 1] = list[j];
            j--;
        }
        list[j + 1] = x;
    }
    return list;
}

const SMALL = 3;
/** Members a set searches in its list before it keeps a table of its primitive ones. */
const SMALL_SET = 8;
const NO_ITEMS: unknown[] = [];
const itself = (x: unknown) => x;
const entryKey = (e: [unknown, unknown]) => e[0];

/** Composite members: a list while small (told apart by equality), by hash beyond. */
class Composites<T> {
    private list: T[] = [];
    private buckets: Map<number, T[]> | undefined;

    constructor(private readonly keyOf: (t: T) => unknown) {}

    get size(): number {
        return this.list.length;
    }

    find(v: unknown): T | undefined {
        const candidates = this.buckets === undefined ? this.list : this.buckets.get(hashOf(v));
        if (candidates === undefined) return undefined;
        for (let i = 0; i < candidates.length; i++) if (equal(this.keyOf(candidates[i]), v)) return candidates[i];
        return undefined;
    }

    /** Adds t (whose key is not there yet). */
    push(t: T): void {
        this.list.push(t);
        if (this.buckets !== undefined) this.bucket(t);
        else if (this.list.length > SMALL) {
            this.buckets = new Map();
            for (const x of this.list) this.bucket(x);
        }
    }

    values(): readonly T[] {
        return this.list;
    }

    private bucket(t: T): void {
        const h = hashOf(this.keyOf(t));
        const b = this.buckets!.get(h);
        if (b) b.push(t);
        else this.buckets!.set(h, [t]);
    }
}

/** A set of Rego values. */
export class RegoSet {
    /** The members in the order they were added (most sets a policy makes stay empty). */
    declare private items: unknown[];
    /**
     * Composite values added but not yet told apart from the members: a set is often only
     * scanned by scans whose order cannot be seen, where a value seen twice changes nothing, and
     * many such sets are never asked their size or members (the library's general_violation
     * sets of every spec field's elements); they are compared (hashed) only when asked.
     */
    declare private pending: unknown[];
    declare private primitives: Set<Primitive> | undefined;
    declare private composites: Composites<unknown> | undefined;
    declare private sorted: unknown[] | undefined;
    declare private hashed: number | undefined;

    // Fields set here, not as class fields (those run a function of their own for every set made, in code not yet optimised).
    constructor() {
        this.items = NO_ITEMS;
        this.pending = NO_ITEMS;
        this.primitives = undefined;
        this.composites = undefined;
        this.sorted = undefined;
        this.hashed = undefined;
    }

    get size(): number {
        this.settle();
        return this.items.length;
    }

    /** The members' hashes summed (any order). */
    hash(): number {
        this.settle();
        if (this.hashed === undefined) {
            let h = 0x1b873593;
            const items = this.items;
            for (let i = 0; i < items.length; i++) h = (h + Math.imul(hashOf(items[i]), 0x01000193)) | 0;
            this.hashed = h >>> 0;
        }
        return this.hashed;
    }

    add(v: unknown): void {
        this.hashed = undefined;
        this.sorted = undefined;
        if (isPrimitive(v)) {
            if (this.hasPrimitive(v)) return;
            if (this.items === NO_ITEMS) this.items = [v];
            else this.items.push(v);
            // A table once the members are many (a small set is searched in its list: no table to make).
            if (this.primitives !== undefined) this.primitives.add(v);
            else if (this.items.length > SMALL_SET) this.primitives = new Set(this.items.filter(isPrimitive) as Primitive[]);
        } else if (this.pending === NO_ITEMS) this.pending = [v];
        else this.pending.push(v);
    }

    /** Tells the pending composites apart from the members. */
    private settle(): void {
        if (this.pending === NO_ITEMS) return;
        const pending = this.pending;
        this.pending = NO_ITEMS;
        this.composites ??= new Composites(itself);
        for (let i = 0; i < pending.length; i++) {
            const v = pending[i];
            if (this.composites.find(v) !== undefined) continue;
            this.composites.push(v);
            if (this.items === NO_ITEMS) this.items = [v];
            else this.items.push(v);
        }
    }

    /** Whether the primitive is a member (a composite member is never === a primitive). */
    private hasPrimitive(v: Primitive): boolean {
        if (this.primitives !== undefined) return this.primitives.has(v) || (isBigNumber(v) && this.primitives.has(otherForm(v as number | bigint)));
        const items = this.items;
        for (let i = 0; i < items.length; i++) if (items[i] === v) return true;
        if (isBigNumber(v)) {
            const w = otherForm(v as number | bigint);
            for (let i = 0; i < items.length; i++) if (items[i] === w) return true;
        }
        return false;
    }

    has(v: unknown): boolean {
        if (isPrimitive(v)) return this.hasPrimitive(v);
        this.settle();
        return this.composites?.find(v) !== undefined;
    }

    /** The members in the order they were added (not to be changed). */
    values(): readonly unknown[] {
        this.settle();
        return this.items;
    }

    /**
     * The members and the values added since the set was last asked, some maybe twice: for a
     * scan whose order cannot be seen (../plan/compile.ts orderFreeScans), where an element seen
     * twice changes nothing (its body only adds to sets, assigns or inserts once, and makes its
     * own arrays and objects).
     */
    valuesSeenOnceOrMore(): readonly unknown[] {
        if (this.pending === NO_ITEMS) return this.items;
        if (this.items === NO_ITEMS) return this.pending;
        return [...this.items, ...this.pending];
    }

    /** The members in OPA's order (cached until the set changes). */
    sortedValues(): unknown[] {
        this.settle();
        if (this.sorted === undefined) this.sorted = sortInPlace([...this.items], compare);
        return this.sorted;
    }
}

/** An object the policy builds (its keys may be any value). */
export class RegoObject {
    /**
     * String keys (the common case) and their values, side by side: a policy's objects are small
     * (a violation's msg, details, field), searched faster in a list than in a table, which a
     * record without prototype would be (V8 keeps those as dictionaries).
     */
    declare private readonly keys: string[];
    declare private readonly vals: unknown[];

    /** An object of the given distinct string keys and their values (the lists are the object's from now on). */
    constructor(keys: string[] = [], vals: unknown[] = []) {
        this.keys = keys;
        this.vals = vals;
        this.index = undefined;
        this.others = undefined;
        this.composites = undefined;
        this.sorted = undefined;
        this.hashed = undefined;
    }
    /** Positions of the string keys, once there are many (an object a comprehension builds). */
    declare private index: Map<string, number> | undefined;

    private position(k: string): number {
        if (this.index !== undefined) return this.index.get(k) ?? -1;
        return this.keys.indexOf(k);
    }
    declare private others: Map<Primitive, [unknown, unknown]> | undefined;
    declare private composites: Composites<[unknown, unknown]> | undefined;
    declare private sorted: unknown[] | undefined;

    get size(): number {
        return this.keys.length + (this.others?.size ?? 0) + (this.composites?.size ?? 0);
    }

    get(k: unknown): unknown {
        if (typeof k === "string") {
            const i = this.position(k);
            return i < 0 ? undefined : this.vals[i];
        }
        if (isPrimitive(k)) return (this.others?.get(k) ?? (isBigNumber(k) ? this.others?.get(otherForm(k as number | bigint)) : undefined))?.[1];
        return this.composites?.find(k)?.[1];
    }

    set(k: unknown, v: unknown): void {
        this.hashed = undefined;
        if (typeof k === "string") {
            const i = this.position(k);
            if (i >= 0) this.vals[i] = v;
            else {
                this.keys.push(k);
                this.vals.push(v);
                if (this.index !== undefined) this.index.set(k, this.keys.length - 1);
                else if (this.keys.length > 16) this.index = new Map(this.keys.map((key, n) => [key, n]));
                this.sorted = undefined;
            }
            return;
        }
        if (isPrimitive(k)) {
            this.others ??= new Map();
            const e = this.others.get(k) ?? (isBigNumber(k) ? this.others.get(otherForm(k as number | bigint)) : undefined);
            if (e) e[1] = v;
            else {
                this.others.set(k, [k, v]);
                this.sorted = undefined;
            }
            return;
        }
        this.composites ??= new Composites(entryKey);
        const e = this.composites.find(k);
        if (e) e[1] = v;
        else {
            this.composites.push([k, v]);
            this.sorted = undefined;
        }
    }

    /** The string keys, in no particular order (hashing and equality need no order). */
    stringKeys(): string[] {
        return [...this.keys];
    }

    declare private hashed: number | undefined;

    /** The entries' hashes summed (any order, no allocation). */
    hash(): number {
        if (this.hashed === undefined) {
            let h = 0x6a09e667;
            for (let i = 0; i < this.keys.length; i++) h = (h + entryHash(this.keys[i], this.vals[i])) | 0;
            if (this.others) for (const [k, x] of this.others.values()) h = (h + entryHash(k, x)) | 0;
            if (this.composites) for (const [k, x] of this.composites.values()) h = (h + entryHash(k, x)) | 0;
            this.hashed = h >>> 0;
        }
        return this.hashed;
    }

    /** Whether every string-keyed entry has an equal value in o (under the same key). */
    stringEntriesIn(o: unknown): boolean {
        for (let i = 0; i < this.keys.length; i++) {
            const y = objectGet(o, this.keys[i]);
            if (y === undefined || !equal(this.vals[i], y)) return false;
        }
        return true;
    }

    /** Whether every key is a string. */
    get stringsOnly(): boolean {
        return this.others === undefined && this.composites === undefined;
    }

    sortedKeys(): unknown[] {
        if (this.sorted === undefined) {
            const all: unknown[] = this.stringKeys();
            if (this.others) all.push(...this.others.keys());
            if (this.composites) for (const [k] of this.composites.values()) all.push(k);
            this.sorted = sortInPlace(all, compare);
        }
        return this.sorted;
    }
}

/** Whether v is a Rego object (a plain object of the input or data, or one the policy built). */
export function isObject(v: unknown): boolean {
    return typeof v === "object" && v !== null && !Array.isArray(v) && !(v instanceof RegoSet);
}

/** The keys of an object in OPA's order; an input object's keys holding undefined do not exist (JSON has none). */
export function objectKeys(o: unknown): unknown[] {
    if (o instanceof RegoObject) return o.sortedKeys();
    const keys = definedKeys(o as object);
    return sortInPlace(keys, compareStrings);
}

export function objectGet(o: unknown, k: unknown): unknown {
    if (o instanceof RegoObject) return o.get(k);
    return typeof k === "string" && hasOwn.call(o, k) ? (o as Record<string, unknown>)[k] : undefined;
}

/** `src[key]` for a key the plan names (a string): the common case, a plain object of the input or data. */
export function dotString(src: unknown, key: string): unknown {
    if (typeof src !== "object" || src === null || Array.isArray(src)) return undefined;
    if (src instanceof RegoObject) return src.get(key);
    if (src instanceof RegoSet) return src.has(key) ? key : undefined;
    // One look-up: a JSON value is never a function (what Object.prototype would give), and __proto__ is checked as own.
    const v = (src as Record<string, unknown>)[key];
    if (v === undefined) return undefined;
    if (typeof v === "function" || key === "__proto__") return hasOwn.call(src, key) ? v : undefined;
    return v;
}

/** `src[key]` (DotStmt): undefined when src is a scalar or has no such key. */
export function dot(src: unknown, key: unknown): unknown {
    if (typeof src !== "object" || src === null) return undefined;
    if (Array.isArray(src)) return typeof key === "number" && Number.isInteger(key) && key >= 0 && key < src.length ? src[key] : typeof key === "bigint" && key >= 0n && key < BigInt(src.length) ? src[Number(key)] : undefined;
    if (src instanceof RegoObject) return src.get(key);
    if (src instanceof RegoSet) return src.has(key) ? key : undefined;
    return typeof key === "string" && hasOwn.call(src, key) ? (src as Record<string, unknown>)[key] : undefined;
}

/** The value under a key a scan visits (a set's member is its own value; the key is known to be there). */
export function member(src: unknown, key: unknown): unknown {
    if (src instanceof RegoSet) return key;
    if (src instanceof RegoObject) return src.get(key);
    return (src as Record<string, unknown>)[key as string];
}

/** The keys a ScanStmt visits: null for an array (its indexes), an object's keys, a set's members; none for a scalar. */
export function scanKeys(src: unknown, keep = false): unknown[] | null {
    if (typeof src !== "object" || src === null) return EMPTY;
    if (Array.isArray(src)) return null;
    if (src instanceof RegoSet) return src.sortedValues();
    if (keep && !(src instanceof RegoObject)) {
        let keys = sortedDataKeys.get(src);
        if (keys === undefined) sortedDataKeys.set(src, (keys = objectKeys(src)));
        return keys;
    }
    return objectKeys(src);
}
/** Sorted key lists of the data document's objects (kept: scanned again for every review). */
const sortedDataKeys = new WeakMap<object, unknown[]>();
const EMPTY: unknown[] = [];

/** The keys a scan whose order cannot be seen visits (../plan/compile.ts orderFreeScans): as scanKeys, in any order. */
export function scanKeysAnyOrder(src: unknown, keep = false): readonly unknown[] | null {
    if (typeof src !== "object" || src === null) return EMPTY;
    if (Array.isArray(src)) return null;
    if (src instanceof RegoSet) return src.valuesSeenOnceOrMore();
    if (src instanceof RegoObject) return src.sortedKeys();
    // Keys holding undefined included: the scan skips them (../plan/compile.ts). Kept for the data
    // document's objects (`keep`) and large objects.
    const cached = largeObjectScanKeys.get(src);
    if (cached !== undefined) return cached;
    const keys = Object.keys(src);
    if (keep || keys.length >= 16) largeObjectScanKeys.set(src, keys);
    return keys;
}
/** The key lists of large objects scanned (data.inventory's maps), undefined-valued keys included. */
const largeObjectScanKeys = new WeakMap<object, string[]>();

/** The keys a scan pinned to one key visits (../plan/specialize.ts pinnedScanKey): that key, where src has it (never an array's: the key is a string or boolean). */
export function scanKeysPinned(src: unknown, key: string | boolean): readonly unknown[] {
    if (typeof src !== "object" || src === null || Array.isArray(src)) return EMPTY;
    const found = src instanceof RegoSet ? src.has(key) : src instanceof RegoObject ? src.get(key) !== undefined : typeof key === "string" && hasOwn.call(src, key) && (src as Record<string, unknown>)[key] !== undefined;
    if (!found) return EMPTY;
    let keys = pinnedKeys.get(key);
    if (keys === undefined) pinnedKeys.set(key, (keys = Object.freeze([key])));
    return keys;
}
/** The one-key lists of pinned scans (their keys are literals of the compiled code: few). */
const pinnedKeys = new Map<string | boolean, readonly unknown[]>();

/** object.get(o, key, fallback) for a key that is not a path (compiled in place, ../plan/compile.ts): undefined where o is no object (the built-in's error). */
export function objectGetOr(o: unknown, key: unknown, fallback: unknown): unknown {
    if (!isObject(o)) return undefined;
    const v = objectGet(o, key);
    return v === undefined ? fallback : v;
}

/** count(v) (compiled in place): undefined for a value that is not a collection or string (the built-in's error). */
export function count(v: unknown): number | undefined {
    return typeof v === "string" || (typeof v === "object" && v !== null) ? length(v) : undefined;
}

/** The number of elements (LenStmt, count). */
export function length(v: unknown): number {
    if (typeof v === "string") return runeCount(v);
    if (Array.isArray(v)) return v.length;
    if (v instanceof RegoSet || v instanceof RegoObject) return v.size;
    if (typeof v === "object" && v !== null) return objectKeys(v).length;
    return 0;
}

export function runeCount(s: string): number {
    let n = s.length;
    for (let i = 0; i < s.length; i++) {
        const c = s.charCodeAt(i);
        if (c >= 0xd800 && c <= 0xdbff && i + 1 < s.length) {
            const d = s.charCodeAt(i + 1);
            if (d >= 0xdc00 && d <= 0xdfff) {
                n--;
                i++;
            }
        }
    }
    return n;
}

function rank(v: unknown): number {
    if (v === null) return 0;
    switch (typeof v) {
        case "boolean":
            return 1;
        case "number":
        case "bigint":
            return 2;
        case "string":
            return 3;
    }
    if (Array.isArray(v)) return 6;
    if (v instanceof RegoSet) return 8;
    return v instanceof NumberText ? 2 : 7;
}

function compareSeq(a: readonly unknown[], b: readonly unknown[]): number {
    const n = Math.min(a.length, b.length);
    for (let i = 0; i < n; i++) {
        const c = compare(a[i], b[i]);
        if (c !== 0) return c;
    }
    return a.length < b.length ? -1 : a.length > b.length ? 1 : 0;
}

/** OPA's ast.Compare. */
export function compare(a: unknown, b: unknown): number {
    if (a === b) return 0;
    const ra = rank(a);
    const rb = rank(b);
    if (ra !== rb) return ra < rb ? -1 : 1;
    switch (ra) {
        case 1:
            return a ? 1 : -1;
        case 2:
            return (a as number) < (b as number) ? -1 : (a as number) > (b as number) ? 1 : 0;
        case 3:
            return compareStrings(a as string, b as string);
        case 6:
            return compareSeq(a as unknown[], b as unknown[]);
        case 8:
            return compareSeq((a as RegoSet).sortedValues(), (b as RegoSet).sortedValues());
    }
    const ka = objectKeys(a);
    const kb = objectKeys(b);
    const n = Math.min(ka.length, kb.length);
    for (let i = 0; i < n; i++) {
        const c = compare(ka[i], kb[i]) || compare(objectGet(a, ka[i]), objectGet(b, kb[i]));
        if (c !== 0) return c;
    }
    return ka.length < kb.length ? -1 : ka.length > kb.length ? 1 : 0;
}

/** Rego equality (EqualStmt): same type and value, numbers by value. */
export function equal(a: unknown, b: unknown): boolean {
    if (a === b) return true;
    if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return (typeof a === "bigint" && typeof b === "number") || (typeof a === "number" && typeof b === "bigint") ? a == b : false;
    if (Array.isArray(a)) {
        if (!Array.isArray(b) || a.length !== b.length) return false;
        for (let i = 0; i < a.length; i++) if (!equal(a[i], b[i])) return false;
        return true;
    }
    if (Array.isArray(b)) return false;
    if (a instanceof RegoSet || b instanceof RegoSet) {
        if (!(a instanceof RegoSet && b instanceof RegoSet) || a.size !== b.size) return false;
        const xs = a.values();
        for (let i = 0; i < xs.length; i++) if (!b.has(xs[i])) return false;
        return true;
    }
    // Objects: the same number of keys, each of a's in b with an equal value (no order needed).
    if (a instanceof RegoObject && !a.stringsOnly) return compare(a, b) === 0;
    if (b instanceof RegoObject && !b.stringsOnly) return compare(a, b) === 0;
    if (objectSize(a) !== objectSize(b)) return false;
    if (a instanceof RegoObject) return a.stringEntriesIn(b);
    const keys = definedKeys(a);
    for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        const y = objectGet(b, k);
        if (y === undefined || !equal((a as Record<string, unknown>)[k], y)) return false;
    }
    return true;
}

function objectSize(o: object): number {
    return o instanceof RegoObject ? o.size : definedKeys(o).length;
}

/**
 * A plain object's keys (those holding a value) in any order: a fresh list for a small object
 * (short-lived garbage costs less than a table of lists kept for every object, which every
 * collection walks), kept for a large one. The input and data are never changed.
 */
function definedKeys(o: object): string[] {
    const cached = largeObjectKeys.get(o);
    if (cached !== undefined) return cached;
    let keys = Object.keys(o);
    for (let i = 0; i < keys.length; i++) {
        if ((o as Record<string, unknown>)[keys[i]] === undefined) {
            keys = keys.filter((k) => (o as Record<string, unknown>)[k] !== undefined);
            break;
        }
    }
    // A large object (data.inventory's maps of objects by name) is scanned once per review: its keys are kept.
    if (keys.length >= 16) largeObjectKeys.set(o, keys);
    return keys;
}
const largeObjectKeys = new WeakMap<object, string[]>();

/** A value as JSON: sets as arrays in OPA's order, built objects as plain objects (keys as their text). */
export function toJSON(v: unknown): unknown {
    if (typeof v === "bigint") return Number(v);
    if (typeof v !== "object" || v === null) return v;
    if (Array.isArray(v)) return v.map(toJSON);
    if (v instanceof RegoSet) return v.sortedValues().map(toJSON);
    const out: Record<string, unknown> = {};
    const keys = objectKeys(v);
    for (let i = 0; i < keys.length; i++) {
        const k = keys[i];
        out[typeof k === "string" ? k : JSON.stringify(toJSON(k))] = toJSON(objectGet(v, k));
    }
    return out;
}

/** Values by argument values: objects by identity (the input and data are never changed), other values by value. */
export class Memo {
    private readonly byValue = new Map<unknown, unknown>();
    private byObject: WeakMap<object, unknown> | undefined;

    get1(a: unknown): unknown {
        return this.at(a);
    }

    set1(value: unknown, a: unknown): void {
        this.put(a, value);
    }

    get(...args: unknown[]): unknown {
        let level: Memo | undefined = this;
        for (let i = 0; i < args.length - 1 && level; i++) level = level.at(args[i]) as Memo | undefined;
        return level?.at(args[args.length - 1]);
    }

    set(value: unknown, ...args: unknown[]): void {
        let level: Memo = this;
        for (let i = 0; i < args.length - 1; i++) {
            let next = level.at(args[i]) as Memo | undefined;
            if (next === undefined) level.put(args[i], (next = new Memo()));
            level = next;
        }
        level.put(args[args.length - 1], value);
    }

    private at(k: unknown): unknown {
        return typeof k === "object" && k !== null ? this.byObject?.get(k) : this.byValue.get(k);
    }

    private put(k: unknown, v: unknown): void {
        if (typeof k === "object" && k !== null) (this.byObject ??= new WeakMap()).set(k, v);
        else {
            // Kept for a whole process: bounded.
            if (this.byValue.size >= 10_000) this.byValue.clear();
            this.byValue.set(k, v);
        }
    }
}

/** A result set as JSON: its members in the order they were found (the order of violations means nothing), their values as toJSON gives them. */
export function resultsJSON(set: readonly unknown[]): { result: unknown }[] {
    // The common case: one result, an empty set (no violation).
    if (set.length === 1) {
        const result = objectGet(set[0], "result");
        if (result instanceof RegoSet && result.size === 0) return [{ result: [] }];
    }
    return set.map((r) => {
        const result = objectGet(r, "result");
        return { result: result instanceof RegoSet ? result.values().map(toJSON) : toJSON(result) };
    });
}

/** The result set of the values a plan added (a set: one value is the common case). */
export function resultSet(added: unknown[]): unknown[] {
    if (added.length < 2) return added;
    const set = new RegoSet();
    for (let i = 0; i < added.length; i++) set.add(added[i]);
    return set.sortedValues();
}

/** The empty collections a policy makes and never adds to, shared (../plan/compile.ts). */
export const EMPTY_ARRAY: readonly unknown[] = Object.freeze([]);
export const EMPTY_OBJECT = new RegoObject();
export const EMPTY_SET = new RegoSet();

const NO_TUPLES: readonly unknown[][] = [];

/**
 * A join's index (../plan/join.ts): what a nest of scans over the data document found for each element,
 * by the value it compares; a look-up gives the elements whose value equals the given one
 * (equal, as the comparison it replaces), in the order they were added.
 */
export class JoinIndex {
    private readonly byScalar = new Map<unknown, unknown[][]>();
    private readonly composite: { key: unknown; tuple: unknown[] }[] = [];

    add(key: unknown, tuple: unknown[]): void {
        if (key === undefined) return;
        if (typeof key !== "object" || key === null) {
            const list = this.byScalar.get(key);
            if (list === undefined) this.byScalar.set(key, [tuple]);
            else list.push(tuple);
        } else this.composite.push({ key, tuple });
    }

    get(key: unknown): readonly unknown[][] {
        if (key === undefined) return NO_TUPLES;
        if (typeof key !== "object" || key === null) return this.byScalar.get(key) ?? NO_TUPLES;
        return this.composite.filter((e) => equal(e.key, key)).map((e) => e.tuple);
    }
}
