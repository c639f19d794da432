/**
 * Offline admission: what the API server does with a ValidatingAdmissionPolicy and its binding
 * for one CREATE request (matchConstraints, matchConditions, variables, validations), with the
 * CEL evaluated by policies/cel/environment.ts. Used by the agreement test; tools/admission/agree.ts asks a real
 * API server the same question.
 */
import { compileLabelSelector, type LabelSelector } from "../gatekeeper/engine/label-selector";
import { parseApiVersion } from "../gatekeeper/engine/gvk";
import { defaultIsClusterScoped, effectiveNamespace } from "../gatekeeper/engine";
import type { K8sObject } from "../gatekeeper/types";
import { NAME_LABEL, resourceOf } from "./generate";
import { asDecoded, evaluateCel } from "../cel/environment";

export interface AdmissionOutcome {
    /** False when the policy does not apply to the object (match constraints or conditions). */
    matched: boolean;
    /** Messages of the failed validations. */
    failed: string[];
    /** Evaluation errors (failurePolicy Fail turns them into a rejection). */
    errors: string[];
    /** The binding's validationActions. */
    actions: string[];
}


/**
 * Judges `object` (created in its namespace) with the policy; `namespaceLabels` gives the labels
 * of a namespace (kubernetes.io/metadata.name is added as the API server does).
 */
export function admit(
    policy: Record<string, any>,
    binding: Record<string, any>,
    object: K8sObject,
    namespaceLabels: (ns: string) => Record<string, string> = () => ({}),
): AdmissionOutcome {
    const actions: string[] = binding.spec.validationActions;
    const none: AdmissionOutcome = { matched: false, failed: [], errors: [], actions };
    const { group, version } = parseApiVersion(object.apiVersion);
    const kind = object.kind ?? "";
    const clusterScoped = defaultIsClusterScoped(group, kind);
    const namespace = effectiveNamespace(object) ?? "";
    const mc = policy.spec.matchConstraints;
    const resource = resourceOf(kind);
    const ruleMatches = (mc.resourceRules as any[]).some((r) =>
        (r.apiGroups.includes("*") || r.apiGroups.includes(group)) &&
        (r.resources.includes("*") || r.resources.includes(resource)) &&
        (r.operations.includes("*") || r.operations.includes("CREATE")) &&
        (r.scope === "*" || (r.scope === "Cluster") === clusterScoped));
    if (!ruleMatches) return none;
    if (mc.namespaceSelector) {
        const selects = compileLabelSelector(mc.namespaceSelector as LabelSelector, "namespaceSelector");
        if (kind === "Namespace" && group === "") {
            if (!selects({ ...(object.metadata?.labels ?? {}), [NAME_LABEL]: object.metadata?.name ?? "" })) return none;
        } else if (!clusterScoped && !selects({ ...namespaceLabels(namespace), [NAME_LABEL]: namespace })) return none;
    }
    if (mc.objectSelector && !compileLabelSelector(mc.objectSelector as LabelSelector, "objectSelector")(object.metadata?.labels ?? {})) return none;

    const decoded = asDecoded({ ...object, metadata: { ...(object.metadata ?? {}), ...(namespace ? { namespace } : {}) } });
    const request = { kind: { group, version, kind }, operation: "CREATE", namespace, name: object.metadata?.name ?? "" };
    const ctx: Record<string, unknown> = { object: decoded, oldObject: null, request, variables: {} };
    const errors: string[] = [];
    for (const cond of policy.spec.matchConditions ?? []) {
        try {
            if (evaluateCel(cond.expression, ctx) !== true) return none;
        } catch (err) {
            errors.push(`matchCondition ${cond.name}: ${(err as Error).message.split("\n")[0]}`);
            return { matched: true, failed: [], errors, actions };
        }
    }
    const variables: Record<string, unknown> = {};
    ctx.variables = variables;
    for (const v of policy.spec.variables ?? []) {
        try {
            variables[v.name] = evaluateCel(v.expression, ctx);
        } catch (err) {
            errors.push(`variable ${v.name}: ${(err as Error).message.split("\n")[0]}`);
        }
    }
    const failed: string[] = [];
    for (const v of policy.spec.validations ?? []) {
        try {
            if (evaluateCel(v.expression, ctx) !== true) failed.push(messageOf(v, ctx));
        } catch (err) {
            errors.push(`${v.message ?? v.expression}: ${(err as Error).message.split("\n")[0]}`);
        }
    }
    return { matched: true, failed, errors, actions };
}

/**
 * A failed validation's message as the API server gives it: messageExpression's value when it is
 * a non-empty string without line breaks, else message, else "failed expression: <expression>".
 */
function messageOf(v: { expression: string; message?: string; messageExpression?: string }, ctx: Record<string, unknown>): string {
    if (v.messageExpression !== undefined) {
        try {
            const m = evaluateCel(v.messageExpression, ctx);
            if (typeof m === "string" && m.trim() !== "" && !m.includes("\n")) return m;
        } catch {
            // An error in messageExpression falls back to message, as the API server does.
        }
    }
    return v.message ?? `failed expression: ${v.expression}`;
}
