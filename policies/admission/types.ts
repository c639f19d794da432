/**
 * The admission side of one Gatekeeper template: the CEL that judges one object the way the
 * template (policies/gatekeeper/templates/<template>.ts) does, with the constraint's
 * parameters inlined.
 */

/** One validation of a ValidatingAdmissionPolicy: the object passes when `expression` is true. */
export interface CelCheck {
    expression: string;
    message: string;
}

export interface AdmissionRule<P = any> {
    /** The constraint kind, e.g. "K8sAllowedRepos" (the template's `kind`). */
    kind: string;
    /** The template's library folder name, e.g. "allowedrepos". */
    template: string;
    /**
     * The checks for a constraint with these parameters (already validated and defaulted by the
     * template's schema). `s` is the CEL expression of the reviewed object: the object itself, or
     * the pod a workload's template describes (Gatekeeper's expansion).
     */
    checks(parameters: P, s: Subject): CelCheck[];
}

/** The reviewed object, as CEL expressions. */
export interface Subject {
    /** The object (or the pod a workload's template describes). */
    o: string;
    /** Its kind, as the review names it ("Pod" for a workload's pod template). */
    kind: string;
    /** Its API group ("" for the core group). */
    group: string;
}

/** A template (or spec rule) that has no admission policy, with the reason. */
export interface NotAtAdmission {
    name: string;
    reason: string;
}
