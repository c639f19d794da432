/**
 * The mutants of each group (./groups.ts) a seed judges: objects with one or two fields removed,
 * nulled, replaced, emptied or grown (./mutate.ts), kept when a Kubernetes API server would let
 * them reach admission (../shared/tools/k8s-strict-check.py with ./schema.py), named apart and
 * placed in the namespace the API server gives them; constraints with mutated parameters, kept
 * when the pack's schema check accepts them.
 */
import { spawnSync } from "node:child_process";
import path from "node:path";
import { buildConstraint, effectiveNamespace, expandPodTemplate, type Constraint } from "../../policies/gatekeeper/engine";
import { EXPANDABLE_KINDS } from "../../policies/gatekeeper/engine/expansion";
import { defaultIsClusterScoped, type ScopePredicate } from "../../policies/gatekeeper/engine/scope";
import { templateRegistry } from "../../policies/gatekeeper/templates";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { decodedJson } from "../../policies/admission/agreement";
import type { Group } from "./groups";
import { mutate, seededRng, type Path, type Rng, type ValuePool } from "./mutate";
import type { SeedReport } from "./report";

export const STRICT_CHECK = path.resolve(__dirname, "..", "..", "..", "shared", "tools", "k8s-strict-check.py");
const SCHEMA_VERSION = "1.35";

export interface Variant {
    value: K8sObject;
    /** "" for the original; the mutations otherwise. */
    ops: string;
    mutant: boolean;
}

const protectObject = (p: Path) => p[0] === "apiVersion" || p[0] === "kind" || (p[0] === "metadata" && (p.length === 1 || p[1] === "name"));

export const holdsNull = (v: unknown): boolean => v === null || (typeof v === "object" && Object.values(v as object).some(holdsNull));

/**
 * The object as it reaches admission: the API server sets metadata.namespace of a namespaced
 * object to the request's namespace (here "default", as the pack assumes); gator takes the
 * object as written, so it is given the namespace explicitly.
 */
export function inNamespace<T extends K8sObject>(o: T): T {
    return inNamespaceWith(o, defaultIsClusterScoped);
}

/** inNamespace with the scope of custom kinds a group's CRDs declare. */
export function inNamespaceWith<T extends K8sObject>(o: T, scope: ScopePredicate): T {
    if (!o || typeof o !== "object" || !o.metadata || typeof o.metadata !== "object") return o;
    const namespace = effectiveNamespace(o, scope);
    if (namespace === undefined || o.metadata.namespace === namespace) return o;
    return { ...o, metadata: { ...o.metadata, namespace } };
}

function renamed<T extends K8sObject>(o: T, suffix: string): T {
    const copy = structuredClone(o);
    if (copy.metadata && typeof copy.metadata === "object" && typeof copy.metadata.name === "string") copy.metadata.name = `${copy.metadata.name}${suffix}`;
    return copy;
}

/** "ok" or the first problem per object, from the strict check (one python process for all). */
export function admissible(objects: readonly unknown[]): boolean[] {
    if (objects.length === 0) return [];
    const r = spawnSync("python3", [path.join(__dirname, "schema.py"), STRICT_CHECK, SCHEMA_VERSION], {
        input: objects.map((o) => JSON.stringify(o)).join("\n") + "\n",
        encoding: "utf8",
        maxBuffer: 1024 * 1024 * 1024,
    });
    if (r.status !== 0) throw new Error(`tools/gatekeeper/schema.py failed: ${r.stderr || r.error?.message}`);
    const lines = r.stdout.split("\n").filter((l) => l !== "");
    if (lines.length !== objects.length) throw new Error(`tools/gatekeeper/schema.py judged ${lines.length} of ${objects.length} objects`);
    return lines.map((l) => l === "ok");
}

function constraintMutant(c: K8sObject, rng: Rng, pool: ValuePool): { value: K8sObject; ops: string } | undefined {
    const params = c.spec?.parameters;
    if (params === undefined || params === null || typeof params !== "object") return undefined;
    const copy = structuredClone(c);
    if (rng.next() < 0.15) {
        delete copy.spec.parameters;
        return { value: copy, ops: "remove .spec.parameters" };
    }
    const m = mutate(params, rng, pool, { operations: ["remove", "replace", "empty", "grow"], maxOperations: 2 });
    if (!m) return undefined;
    // The API server drops nulls of a custom resource before validating it (gator does not).
    copy.spec.parameters = decodedJson(m.value);
    return { value: copy, ops: m.operations.map((o) => o.replace(/^(\w+) /, "$1 .spec.parameters")).join("; ") };
}

export function toConstraintInput(c: K8sObject) {
    return { kind: c.kind ?? "", name: c.metadata?.name ?? "", enforcementAction: c.spec?.enforcementAction, match: c.spec?.match, parameters: c.spec?.parameters };
}

export interface PreparedGroup {
    group: Group;
    objects: Variant[];
    constraints: (Variant & { built: Constraint })[];
}

/** Rounds of object mutants: a base short of its quota after a round gets more candidates, sized by how many of its candidates were admissible so far. */
const MUTATION_ROUNDS = 4;

/** Mutants of every group, kept when admissible (objects) or accepted by the pack (parameters). */
export function prepare(groups: readonly Group[], seed: number, pool: ValuePool, report: SeedReport): PreparedGroup[] {
    const rng = seededRng(seed);
    const prepared: PreparedGroup[] = groups.map((group) => ({ group, objects: [], constraints: [] }));
    const kept = new Map<string, number>();
    const tried = new Map<string, number>();
    const usable = new Map<string, number>();
    const seen = new Set<string>();
    for (let round = 0; round < MUTATION_ROUNDS; round++) {
        const candidates: { g: number; base: number; value: K8sObject; ops: string }[] = [];
        groups.forEach((group, g) => {
            group.objects.forEach((o, base) => {
                if (round === 0) candidates.push({ g, base, value: o, ops: "" });
                const k = `${g}/${base}`;
                const short = group.objectMutants - (kept.get(k) ?? 0);
                if (short <= 0) return;
                const t = tried.get(k) ?? 0;
                // No admissible candidate yet (e.g. a kind the schemas do not know): no more rounds.
                if (t > 0 && (usable.get(k) ?? 0) === 0) return;
                const rate = t === 0 ? 0.25 : Math.max((usable.get(k) ?? 0) / t, 0.02);
                const n = Math.min(Math.ceil(short / rate) + 2, short * 50 + 2);
                tried.set(k, t + n);
                for (let i = 0; i < n; i++) {
                    const m = mutate(o, rng, pool, { protect: protectObject, maxOperations: 2 });
                    if (m) candidates.push({ g, base, value: m.value, ops: m.operations.join("; ") });
                }
            });
        });
        if (candidates.length === 0) break;
        const ok = admissible(candidates.map((c) => c.value));
        candidates.forEach((c, i) => {
            const p = prepared[c.g];
            const original = c.ops === "";
            const text = `${c.g}:${JSON.stringify(c.value)}`;
            if (seen.has(text)) return;
            seen.add(text);
            // A workload without its pod template: the API server requires one (spec.template,
            // spec.jobTemplate.spec.template) and gator cannot expand it.
            if (!ok[i] || (EXPANDABLE_KINDS.has(c.value.kind ?? "") && !expandPodTemplate(c.value))) {
                if (!original) report.refusedObjects++;
                return;
            }
            const k = `${c.g}/${c.base}`;
            if (!original) usable.set(k, (usable.get(k) ?? 0) + 1);
            if (!original && (kept.get(k) ?? 0) >= p.group.objectMutants) return;
            if (!original) {
                kept.set(k, (kept.get(k) ?? 0) + 1);
                report.objectMutants++;
            }
            const value = renamed(inNamespace(c.value), `-v${p.objects.length}`);
            p.objects.push({ value, ops: c.ops, mutant: !original });
            // What the API server hands to admission: the same object without its nulls.
            if (holdsNull(value)) p.objects.push({ value: renamed(inNamespace(decodedJson(c.value) as K8sObject), `-v${p.objects.length}`), ops: `${c.ops} (as decoded)`, mutant: false });
        });
    }
    prepared.forEach((p) => {
        p.group.constraints.forEach((c, ci) => {
            const add = (value: K8sObject, ops: string, mutant: boolean) => {
                try {
                    // Gatekeeper's constraint names have at most 63 characters.
                    const suffix = `-p${ci}x${p.constraints.length}`;
                    const named = mutant ? { ...value, metadata: { ...value.metadata, name: `${String(value.metadata?.name).slice(0, 63 - suffix.length)}${suffix}` } } : value;
                    p.constraints.push({ value: named, ops, mutant, built: buildConstraint(toConstraintInput(named), p.group.registry ?? templateRegistry) });
                    if (mutant) report.constraintMutants++;
                } catch {
                    if (mutant) report.refusedConstraints++;
                    else throw new Error(`${p.group.id}: the pack refuses the original constraint ${c.kind}/${c.metadata?.name}`);
                }
            };
            add(c, "", false);
            const texts = new Set([JSON.stringify(c.spec?.parameters ?? null)]);
            for (let i = 0, made = 0; made < p.group.constraintMutants && i < p.group.constraintMutants * 4; i++) {
                const m = constraintMutant(c, rng, pool);
                if (!m) continue;
                const t = JSON.stringify(m.value.spec?.parameters ?? null);
                if (texts.has(t)) continue;
                texts.add(t);
                made++;
                add(m.value, m.ops, true);
            }
        });
    });
    return prepared;
}
