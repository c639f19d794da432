/**
 * Agreement of the two enforcement points on one fixture: the CrossGuard verdict (the policy
 * pack's Gatekeeper engine) and the admission verdict of the generated ValidatingAdmissionPolicy
 * (offline CEL here, a real API server in tools/admission/agree.ts).
 */
import { buildConstraint, EMPTY_CONFIG, evaluate, type Constraint, type ConstraintInput } from "../gatekeeper/engine";
import { templateRegistry } from "../gatekeeper/templates";
import type { K8sObject } from "../gatekeeper/types";
import { generateAdmissionPolicies } from "./generate";
import { admissionRules } from "./rules";
import { admit } from "./simulate";

export interface Fixture {
    id: string;
    constraint: ConstraintInput;
    object: K8sObject;
    /** Other objects of the stack (namespaces give their labels). */
    inventory?: K8sObject[];
}

export interface Agreement {
    id: string;
    /** True when the pack reports a violation of the constraint for the object. */
    crossGuard: boolean;
    /** True when admission refuses (Deny), warns (Warn) or audits (Audit) the object; undefined when no policy was generated. */
    admission: boolean | undefined;
    agree: boolean;
    /** Why there is no policy, the failed validations, or evaluation errors. */
    detail: string[];
    /**
     * Set when the two verdicts differ only because the object holds a null the API server never
     * shows admission (its typed decoding drops null fields and turns a null label or annotation
     * into ""): CrossGuard's verdict on the object as decoded equals admission's. Not counted as
     * agreement; reported apart (docs/admission.md, "Nulls").
     */
    nullOnly?: boolean;
}

/** The object as the API server decodes it (null fields dropped, null label/annotation values ""), in JSON form. */
export function decodedJson(value: unknown, key = ""): unknown {
    if (Array.isArray(value)) return value.filter((v) => v !== null).map((v) => decodedJson(v));
    if (value !== null && typeof value === "object") {
        const stringMap = key === "labels" || key === "annotations";
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
            if (v === null) {
                if (stringMap) out[k] = "";
                continue;
            }
            out[k] = decodedJson(v, k);
        }
        return out;
    }
    return value;
}

const holdsNull = (value: unknown): boolean =>
    value === null || (typeof value === "object" && Object.values(value as Record<string, unknown>).some(holdsNull));

export function crossGuardViolates(constraint: Constraint, object: K8sObject, inventory: readonly K8sObject[] = []): boolean {
    return evaluate([object], [constraint], EMPTY_CONFIG, { inventory: [...inventory, object] }).length > 0;
}

export function namespaceLabelsOf(inventory: readonly K8sObject[] = []): (ns: string) => Record<string, string> {
    return (ns) => inventory.find((o) => o.kind === "Namespace" && o.metadata?.name === ns)?.metadata?.labels ?? {};
}

/** True when the fixture's template has an admission rule. */
export function isAdmissionFixture(f: Fixture): boolean {
    return admissionRules.has(f.constraint.kind);
}

export function checkAgreement(f: Fixture): Agreement {
    const constraint = buildConstraint(f.constraint, templateRegistry);
    const crossGuard = crossGuardViolates(constraint, f.object, f.inventory);
    const generated = generateAdmissionPolicies([constraint]);
    if (generated.policies.length === 0) {
        // No policy means admission lets everything through.
        const reason = generated.skipped.map((s) => s.reason);
        return { id: f.id, crossGuard, admission: undefined, agree: !crossGuard, detail: reason };
    }
    const outcome = admit(generated.policies[0], generated.bindings[0], f.object, namespaceLabelsOf(f.inventory));
    const admission = outcome.failed.length > 0 || outcome.errors.length > 0;
    const detail = [...outcome.failed, ...outcome.errors];
    if (admission !== crossGuard && holdsNull(f.object)) {
        const decoded = decodedJson(f.object) as K8sObject;
        if (crossGuardViolates(constraint, decoded, f.inventory) === admission) return { id: f.id, crossGuard, admission, agree: false, detail, nullOnly: true };
    }
    return { id: f.id, crossGuard, admission, agree: admission === crossGuard, detail };
}

/** The conformance cases (shared/conformance/gatekeeper/cases.json format) as fixtures: CREATE cases of templates with an admission rule. */
export function fixturesFromCases(cases: readonly any[]): Fixture[] {
    return cases
        .filter((c) => c.operation === "CREATE" && admissionRules.has(c.constraintKind))
        .map((c) => ({
            id: c.id,
            constraint: { kind: c.constraintKind, name: c.constraintName ?? "case", enforcementAction: c.enforcementAction, match: c.constraintMatch, parameters: c.constraintParameters },
            object: c.object,
            inventory: c.inventory ?? [],
        }));
}
