/**
 * The object diff between two renders: which Kubernetes objects were added, removed or changed
 * (identity: API group, kind, namespace, name) and, for a changed object, every field that
 * differs as a path with its old and new value, or a unified line diff for multi-line strings.
 *
 * Inputs are redacted renders; Secret data is redacted here once more so that no path of the
 * diff can show a secret value even if a caller passes unredacted objects.
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { REDACTED } from "../harness/manifests";
import { unifiedLineDiff } from "./textDiff";

export interface ObjectRef {
    apiVersion: string;
    kind: string;
    /** Absent for cluster-scoped objects. */
    namespace?: string;
    name: string;
}

export type FieldChange =
    /** A scalar, array of scalars or whole subtree that differs; absent on one side when added or removed. */
    | { path: string; type: "value"; old?: unknown; new?: unknown }
    /** A multi-line string (on either side), as unified diff lines. */
    | { path: string; type: "text"; lines: string[] };

export interface ChangedObject extends ObjectRef {
    changes: FieldChange[];
}

export interface ObjectDiff {
    added: ObjectRef[];
    removed: ObjectRef[];
    changed: ChangedObject[];
    unchangedCount: number;
}

const group = (apiVersion: string | undefined) => (apiVersion?.includes("/") ? apiVersion.split("/")[0] : "");

function refOf(o: K8sObject): ObjectRef {
    const ref: ObjectRef = { apiVersion: o.apiVersion ?? "", kind: o.kind ?? "", name: o.metadata?.name ?? "" };
    if (o.metadata?.namespace) ref.namespace = o.metadata.namespace;
    return ref;
}

/** Identity across revisions: the API version may change (v2beta2 -> v2) without the object being replaced. */
const identity = (o: K8sObject) => [group(o.apiVersion), o.kind ?? "", o.metadata?.namespace ?? "", o.metadata?.name ?? ""].join("\u0000");

export function describeRef(ref: ObjectRef): string {
    return `${ref.kind} ${ref.namespace ? `${ref.namespace}/` : ""}${ref.name}`;
}

/** Every value of a Secret's data and stringData replaced (key names kept, as in the render). */
export function redactSecretData(o: K8sObject): K8sObject {
    if (o.kind !== "Secret" || group(o.apiVersion) !== "") return o;
    const out: K8sObject = { ...o };
    for (const field of ["data", "stringData"]) {
        const values = o[field];
        if (values && typeof values === "object") out[field] = Object.fromEntries(Object.keys(values).map((k) => [k, REDACTED]));
    }
    return out;
}

export function diffObjects(base: readonly K8sObject[], head: readonly K8sObject[]): ObjectDiff {
    const before = new Map(base.map((o) => [identity(o), redactSecretData(o)]));
    const after = new Map(head.map((o) => [identity(o), redactSecretData(o)]));
    const added: ObjectRef[] = [];
    const removed: ObjectRef[] = [];
    const changed: ChangedObject[] = [];
    let unchangedCount = 0;
    for (const [id, o] of after) {
        const old = before.get(id);
        if (!old) {
            added.push(refOf(o));
            continue;
        }
        const changes = diffValues(old, o, "");
        if (changes.length === 0) unchangedCount++;
        else changed.push({ ...refOf(o), changes });
    }
    for (const [id, o] of before) if (!after.has(id)) removed.push(refOf(o));
    const order = (a: ObjectRef, b: ObjectRef) => compareRefs(a, b);
    return { added: added.sort(order), removed: removed.sort(order), changed: changed.sort(order), unchangedCount };
}

function compareRefs(a: ObjectRef, b: ObjectRef): number {
    const ka = [a.kind, a.namespace ?? "", a.name];
    const kb = [b.kind, b.namespace ?? "", b.name];
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => typeof v === "object" && v !== null && !Array.isArray(v);
const isScalar = (v: unknown) => v === null || typeof v !== "object";
const isMultiline = (v: unknown) => typeof v === "string" && v.includes("\n");

/** `a.b`, `a["app.conf"]` for keys that are not plain identifiers. */
function childPath(parent: string, key: string): string {
    if (/^[A-Za-z_$][\w$-]*$/.test(key)) return parent ? `${parent}.${key}` : key;
    return `${parent}[${JSON.stringify(key)}]`;
}

/** Arrays of named objects (containers, env, ports, volumes) are matched by name, not position. */
function namedElements(arr: unknown[]): Map<string, unknown> | undefined {
    const byName = new Map<string, unknown>();
    for (const el of arr) {
        if (!isPlainObject(el) || typeof el.name !== "string" || byName.has(el.name)) return undefined;
        byName.set(el.name, el);
    }
    return byName;
}

function diffValues(old: unknown, cur: unknown, path: string): FieldChange[] {
    if (isMultiline(old) || isMultiline(cur)) {
        if (old === cur) return [];
        if (typeof old === "string" && typeof cur === "string") return [{ path, type: "text", lines: unifiedLineDiff(old, cur) }];
    }
    if (isPlainObject(old) && isPlainObject(cur)) {
        const keys = [...new Set([...Object.keys(old), ...Object.keys(cur)])].sort();
        return keys.flatMap((k) => {
            const p = childPath(path, k);
            if (!(k in cur)) return [removedField(p, old[k])];
            if (!(k in old)) return [addedField(p, cur[k])];
            return diffValues(old[k], cur[k], p);
        });
    }
    if (Array.isArray(old) && Array.isArray(cur) && !(old.every(isScalar) && cur.every(isScalar))) {
        const oldNamed = namedElements(old);
        const curNamed = namedElements(cur);
        if (oldNamed && curNamed) {
            const out: FieldChange[] = [];
            for (const [name, el] of curNamed) {
                const p = `${path}[name=${name}]`;
                out.push(...(oldNamed.has(name) ? diffValues(oldNamed.get(name), el, p) : [addedField(p, el)]));
            }
            for (const [name, el] of oldNamed) if (!curNamed.has(name)) out.push(removedField(`${path}[name=${name}]`, el));
            return out;
        }
        const out: FieldChange[] = [];
        for (let i = 0; i < Math.max(old.length, cur.length); i++) {
            const p = `${path}[${i}]`;
            if (i >= cur.length) out.push(removedField(p, old[i]));
            else if (i >= old.length) out.push(addedField(p, cur[i]));
            else out.push(...diffValues(old[i], cur[i], p));
        }
        return out;
    }
    return JSON.stringify(old) === JSON.stringify(cur) ? [] : [{ path, type: "value", old, new: cur }];
}

function addedField(path: string, value: unknown): FieldChange {
    return isMultiline(value) ? { path, type: "text", lines: unifiedLineDiff("", value as string) } : { path, type: "value", new: value };
}

function removedField(path: string, value: unknown): FieldChange {
    return isMultiline(value) ? { path, type: "text", lines: unifiedLineDiff(value as string, "") } : { path, type: "value", old: value };
}
