/**
 * Judges a prepared group (./mutants.ts): gator's violations (one gator run; what gator refuses is
 * taken out and reported) against the pack's engine, the Wasm engine (the library's Rego
 * compiled) and the generated ValidatingAdmissionPolicies (offline CEL), pair by pair (object,
 * constraint), into a seed's report (./report.ts).
 */
import { buildConstraint, evaluate, type Constraint, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import { defaultIsClusterScoped, withDeclaredScopes } from "../../policies/gatekeeper/engine/scope";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { namespaceLabelsOf } from "../../policies/admission/agreement";
import { generateAdmissionPolicies } from "../../policies/admission/generate";
import { admissionRules } from "../../policies/admission/rules";
import { admit } from "../../policies/admission/simulate";
import { EXPANSION_TEMPLATES, objectKey, runGator } from "./gator";
import { holdsNull, inNamespaceWith, toConstraintInput, type PreparedGroup } from "./mutants";
import type { Difference, SeedReport } from "./report";
import { syncAll } from "./wasmLibrary";

export const normalizeMessage = (m: string) => m.replace(/^\[Implied by [^\]]*\] /, "[Implied by <expansion>] ");

/** Gator on a prepared group; objects or constraints gator refuses are removed (and reported as differences). */
function gatorVerdicts(gator: string, templates: readonly K8sObject[], p: PreparedGroup, report: SeedReport, timeoutSeconds: number) {
    for (let attempt = 0; attempt < 200; attempt++) {
        const docs = [...templates, ...EXPANSION_TEMPLATES, ...p.constraints.map((c) => c.value), ...p.group.inventory.map((o) => inNamespaceWith(o, withDeclaredScopes(p.group.inventory, defaultIsClusterScoped))), ...p.objects.map((o) => o.value)];
        const t0 = Date.now();
        const run = runGator(gator, docs, timeoutSeconds * 1000, p.group.native ?? false);
        report.gatorRuns++;
        report.gatorSeconds += (Date.now() - t0) / 1000;
        if (run.ok) return run.violations;
        const constraint = /adding constraint "([^"]+)"/.exec(run.error)?.[1];
        const reviewed = /reviewing (?:expanded resource )?\S+ ([^/\s]*)\/(\S+):/.exec(run.error) ?? /expanding resource (\S+):/.exec(run.error);
        if (constraint) {
            const c = p.constraints.find((x) => x.value.metadata?.name === constraint);
            if (!c) throw new Error(`${p.group.id}: ${run.error}`);
            report.differ.push({ group: p.group.id, object: "(none)", objectOps: "", constraint: `${c.value.kind}/${constraint}`, constraintOps: c.ops, gator: [`refused: ${run.error.split("\n")[0]}`], pack: ["accepted"] });
            p.constraints.splice(p.constraints.indexOf(c), 1);
            continue;
        }
        const unexpandable = /could not find source field "[^"]+" in resource (\S+)/.exec(run.error);
        if (unexpandable) {
            // A workload without its pod template: the API server requires one (spec.template,
            // spec.jobTemplate.spec.template), so such an object never reaches admission.
            const o = p.objects.find((x) => x.value.metadata?.name === unexpandable[1]);
            if (!o) throw new Error(`${p.group.id}: ${run.error}`);
            p.objects.splice(p.objects.indexOf(o), 1);
            if (o.mutant) {
                report.objectMutants--;
                report.refusedObjects++;
            }
            continue;
        }
        if (reviewed) {
            const name = reviewed.length === 3 ? reviewed[2] : reviewed[1];
            const o = p.objects.find((x) => x.value.metadata?.name === name);
            if (!o) throw new Error(`${p.group.id}: ${run.error}`);
            report.differ.push({ group: p.group.id, object: objectKey(o.value), objectOps: o.ops, constraint: "(any)", constraintOps: "", gator: [`error: ${run.error.split("\n")[0]}`], pack: ["(evaluated)"] });
            p.objects.splice(p.objects.indexOf(o), 1);
            continue;
        }
        throw new Error(`${p.group.id}: ${run.error}`);
    }
    throw new Error(`${p.group.id}: gator kept failing`);
}

/** The violation messages of one engine by (object, constraint name). */
function messagesByPair(objects: readonly K8sObject[], results: ReturnType<typeof evaluate>): Map<string, string[]> {
    const by = new Map<string, string[]>();
    for (const r of results) {
        const k = `${objectKey(objects[r.objectIndex])}\u0000${r.constraintName}`;
        by.set(k, [...(by.get(k) ?? []), normalizeMessage(r.message)]);
    }
    return by;
}

/**
 * Judges a prepared group with gator, the pack and, given `wasm` (the library's templates
 * compiled to Wasm), the Wasm engine as a third judge. `templates`: the ConstraintTemplate objects
 * gator loads, by kind. data.inventory holds every inventory object and every judged object on all
 * sides (gator syncs them all; the engine through a Config that syncs each kind seen).
 */
export function judge(gator: string, templates: ReadonlyMap<string, K8sObject>, p: PreparedGroup, report: SeedReport, gatorTimeoutSeconds = 600, wasm?: TemplateRegistry): void {
    const kinds = [...new Set(p.constraints.map((c) => c.value.kind ?? ""))];
    const templateObjects = kinds.map((k) => {
        const t = templates.get(k);
        if (!t) throw new Error(`${p.group.id}: no ConstraintTemplate for ${k}`);
        return t;
    });
    const gatorViolations = gatorVerdicts(gator, templateObjects, p, report, gatorTimeoutSeconds);
    const key = (object: string, constraint: string) => `${object}\u0000${constraint}`;
    const byGator = new Map<string, string[]>();
    for (const v of gatorViolations) {
        const k = key(v.object, v.constraintName);
        byGator.set(k, [...(byGator.get(k) ?? []), normalizeMessage(v.message)]);
    }
    const objects = p.objects.map((o) => o.value);
    // The group's own CRDs say which of its custom kinds are cluster-scoped.
    const scope = withDeclaredScopes(p.group.inventory, defaultIsClusterScoped);
    const inventory = [...p.group.inventory.map((o) => inNamespaceWith(o, scope)), ...objects];
    const synced = syncAll(inventory);
    const byPack = messagesByPair(objects, evaluate(objects, p.constraints.map((c) => c.built), synced, { inventory, ...(p.group.audit ? { previous: objects } : {}) }));
    let byWasm: Map<string, string[]> | undefined;
    const wasmRefused = new Map<string, string>();
    if (wasm) {
        const built: Constraint[] = [];
        for (const c of p.constraints) {
            try {
                built.push(buildConstraint(toConstraintInput(c.value), wasm));
            } catch (err) {
                wasmRefused.set(c.value.metadata?.name ?? "", `refused: ${(err as Error).message}`);
            }
        }
        byWasm = messagesByPair(objects, evaluate(objects, built, synced, { inventory }));
    }
    const nsLabels = namespaceLabelsOf([...p.group.inventory, ...objects]);
    for (const c of p.constraints) {
        const name = c.value.metadata?.name ?? "";
        const generated = generateAdmissionPolicies([c.built]);
        for (const o of p.objects) {
            const k = key(objectKey(o.value), name);
            const g = [...(byGator.get(k) ?? [])].sort();
            const mine = [...(byPack.get(k) ?? [])].sort();
            const diff = (gatorSide: string[], packSide: string[]): Difference => ({
                group: p.group.id,
                object: objectKey(o.value),
                objectOps: o.ops,
                constraint: `${c.value.kind}/${name}`,
                constraintOps: c.ops,
                gator: gatorSide,
                pack: packSide,
            });
            if (o.mutant || c.mutant) {
                if (JSON.stringify(g) === JSON.stringify(mine)) report.agree++;
                else report.differ.push(diff(g, mine));
                if (byWasm) {
                    const refused = wasmRefused.get(name);
                    const theirs = refused ? [refused] : [...(byWasm.get(k) ?? [])].sort();
                    if (JSON.stringify(g) === JSON.stringify(theirs)) report.wasmAgree++;
                    else report.wasmDiffer.push({ ...diff(g, theirs), judge: "wasm" });
                }
            }
            // Admission never sees nulls (the decoded copy stands for the object there); templates
            // that compare objects with others have no admission rule (docs/admission.md).
            if (holdsNull(o.value) || !admissionRules.has(c.built.kind)) continue;
            if (generated.policies.length === 0) {
                if (g.length === 0) report.admissionAgree++;
                else report.admissionDiffer.push(diff(g, [`admitted: no admission policy (${generated.skipped.map((s) => s.reason).join("; ")})`]));
                continue;
            }
            const outcome = admit(generated.policies[0], generated.bindings[0], o.value, nsLabels);
            const refused = outcome.failed.length > 0 || outcome.errors.length > 0;
            if (refused === g.length > 0) report.admissionAgree++;
            else report.admissionDiffer.push(diff(g, [refused ? `refused: ${[...outcome.failed, ...outcome.errors].join(" | ")}` : "admitted"]));
        }
    }
}
