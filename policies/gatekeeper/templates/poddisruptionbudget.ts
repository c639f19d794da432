import type { K8sObject, TemplateRule } from "../types";
import { rego, regoLessOrEqual, violations } from "./lib/pod";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sPodDisruptionBudget",
    template: "poddisruptionbudget",
    category: "general",
    description: "Disallow the following scenarios when deploying PodDisruptionBudgets or resources that implement the replica subresource (e.g. Deployment, ReplicationController, ReplicaSet, StatefulSet): 1. Deployment of PodDisruptionBudgets with .spec.maxUnavailable == 0 2. Deployment of PodDisruptionBudgets with .spec.minAvailable == .spec.replicas of the resource with replica subresource This will prevent PodDisruptionBudgets from blocking voluntary disruptions such as node draining.\nhttps://kubernetes.io/docs/concepts/workloads/pods/disruptions/",
    parameterSchema: null,
    validate({ review, inventory }) {
        const obj = review.object;
        const messages: (string | undefined)[] = [];
        if (review.kind.kind === "PodDisruptionBudget" && !maxUnavailableValid(obj)) {
            messages.push(rego`PodDisruptionBudget <${obj.metadata?.name}> has maxUnavailable of 0, only positive integers are allowed for maxUnavailable`);
        }
        // Every reviewed object (a PodDisruptionBudget too, which then selects itself) against the
        // policy/v1 budgets of its namespace whose matchLabels are a subset of its selector's.
        const selector = obj.spec?.selector?.matchLabels;
        const budgets = inventory
            .list("PodDisruptionBudget", { group: "policy", namespace: review.namespace })
            .filter((pdb) => pdb.apiVersion === "policy/v1" && selects(pdb, selector));
        for (const pdb of budgets) {
            if (!maxUnavailableValid(pdb)) {
                messages.push(
                    rego`${obj.kind} <${obj.metadata?.name}> has been selected by PodDisruptionBudget <${pdb.metadata?.name}> but has maxUnavailable of 0, only positive integers are allowed for maxUnavailable`,
                );
            }
            const replicas = obj.spec?.replicas;
            if (!minAvailableValid(replicas, pdb)) {
                messages.push(
                    rego`${obj.kind} <${obj.metadata?.name}> has ${replicas} replica(s) but PodDisruptionBudget <${pdb.metadata?.name}> has minAvailable of ${pdb.spec?.minAvailable}, PodDisruptionBudget count should always be lower than replica(s), and not used when replica(s) is set to 1`,
                );
            }
        }
        return violations(messages);
    },
};

/** object.get(obj, key, default): the value when the key is present (null included), else the default; undefined when obj is no object. */
function objectGet(obj: unknown, key: string, fallback: unknown): unknown {
    if (!obj || typeof obj !== "object" || Array.isArray(obj)) return undefined;
    return key in obj ? (obj as Record<string, unknown>)[key] : fallback;
}

/**
 * As the library's Rego: object.get(spec, "maxUnavailable", 1) > 0 with Rego's ordering, so 0,
 * a negative number, null or false are invalid while any string ("0%" too) counts as greater than
 * 0; a budget without spec is invalid.
 */
function maxUnavailableValid(pdb: K8sObject): boolean {
    const max = objectGet(pdb.spec, "maxUnavailable", 1);
    return max !== undefined && !regoLessOrEqual(max, 0);
}

/**
 * As the library's Rego: replicas > object.get(spec, "minAvailable", -1) with Rego's ordering, so a
 * string minAvailable ("50%", "2") is never below a numeric replica count; absent replicas are
 * not valid (and then leave the message undefined).
 */
function minAvailableValid(replicas: unknown, pdb: K8sObject): boolean {
    const min = objectGet(pdb.spec, "minAvailable", -1);
    return replicas !== undefined && min !== undefined && !regoLessOrEqual(replicas, min);
}

/** The budget's matchLabels are a subset of the workload's selector (an empty budget selector selects all). */
function selects(pdb: K8sObject, workloadLabels: Record<string, string> | undefined): boolean {
    const wanted: Record<string, string> = pdb.spec?.selector?.matchLabels ?? {};
    return Object.entries(wanted).every(([k, v]) => workloadLabels?.[k] === v);
}
