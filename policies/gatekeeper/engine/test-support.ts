/** Builders shared by the engine's tests: a probe template that reports every object it reviews. */
import type { K8sObject, TemplateRule } from "../types";
import { buildConstraint, createTemplateRegistry, type ConstraintInput, type GatekeeperConfig } from "./constraints";
import { evaluate, type EvaluationResult } from "./evaluate";
import type { Match } from "./match";

/** Reports "<Kind> <namespace>/<name>" for each object it sees, so tests can tell what matched. */
export const probeRule: TemplateRule = {
    kind: "TestProbe",
    template: "test-probe",
    category: "general",
    description: "reports every reviewed object",
    parameterSchema: { type: "object", properties: { tag: { type: "string" } } },
    validate: ({ review }) => [{ msg: `${review.kind.kind} ${review.namespace ?? "-"}/${review.name ?? ""}` }],
};

export const testRegistry = createTemplateRegistry([probeRule]);

export function probe(match: Match, extra: Partial<ConstraintInput> = {}) {
    return buildConstraint({ kind: "TestProbe", name: extra.name ?? "probe", match, ...extra }, testRegistry);
}

/** Messages of the probe for the objects `match` selects. */
export function matched(match: Match, objects: K8sObject[], config?: GatekeeperConfig): string[] {
    return evaluate(objects, [probe(match)], config).map((r: EvaluationResult) => r.message);
}

export function obj(apiVersion: string, kind: string, name: string, namespace?: string, labels?: Record<string, string>): K8sObject {
    const metadata: K8sObject["metadata"] = { name };
    if (namespace) metadata.namespace = namespace;
    if (labels) metadata.labels = labels;
    return { apiVersion, kind, metadata };
}

/**
 * Runs one template on one object the way the pack does: parameters validated against the
 * template's schema (defaults applied), the object matched by its own kind, the inventory made of
 * `others` plus the object itself. Returns the violation messages.
 */
export function checkTemplate(
    rule: TemplateRule,
    object: K8sObject,
    parameters: Record<string, unknown> = {},
    others: K8sObject[] = [],
): string[] {
    const group = object.apiVersion?.includes("/") ? object.apiVersion.split("/")[0] : "";
    const constraint = buildConstraint(
        { kind: rule.kind, name: "test", parameters, match: { kinds: [{ apiGroups: [group], kinds: [object.kind ?? ""] }] } },
        createTemplateRegistry([rule]),
    );
    return evaluate([object], [constraint], undefined, { inventory: [...others, object] }).map((r) => r.message);
}
