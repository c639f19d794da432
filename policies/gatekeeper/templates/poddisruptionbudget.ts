import type { K8sObject, TemplateRule } from "../types";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sPodDisruptionBudget",
    template: "poddisruptionbudget",
    category: "general",
    description: "Disallow the following scenarios when deploying PodDisruptionBudgets or resources that implement the replica subresource (e.g. Deployment, ReplicationController, ReplicaSet, StatefulSet): 1. Deployment of PodDisruptionBudgets with .spec.maxUnavailable == 0 2. Deployment of PodDisruptionBudgets with .spec.minAvailable == .spec.replicas of the resource with replica subresource This will prevent PodDisruptionBudgets from blocking voluntary disruptions such as node draining.\nhttps://kubernetes.io/docs/concepts/workloads/pods/disruptions/",
    parameterSchema: null,
    validate({ review, inventory }) {
        const obj = review.object;
        const messages: string[] = [];
        if (review.kind.kind === "PodDisruptionBudget") {
            if (blocksAllDisruptions(obj)) {
                messages.push(
                    `PodDisruptionBudget <${obj.metadata?.name}> has maxUnavailable of 0, only positive integers are allowed for maxUnavailable`,
                );
            }
            return messages.map((msg) => ({ msg }));
        }
        const selector = obj.spec?.selector?.matchLabels;
        const budgets = inventory
            .list("PodDisruptionBudget", { group: "policy", namespace: review.namespace })
            .filter((pdb) => pdb.apiVersion === "policy/v1" && selects(pdb, selector));
        for (const pdb of budgets) {
            if (blocksAllDisruptions(pdb)) {
                messages.push(
                    `${obj.kind} <${obj.metadata?.name}> has been selected by PodDisruptionBudget <${pdb.metadata?.name}> ` +
                        `but has maxUnavailable of 0, only positive integers are allowed for maxUnavailable`,
                );
            }
            const replicas = obj.spec?.replicas;
            const minAvailable = pdb.spec?.minAvailable;
            if (typeof replicas === "number" && minAvailable !== undefined && !leavesRoomToEvict(replicas, minAvailable)) {
                messages.push(
                    `${obj.kind} <${obj.metadata?.name}> has ${replicas} replica(s) but PodDisruptionBudget <${pdb.metadata?.name}> ` +
                        `has minAvailable of ${minAvailable}, PodDisruptionBudget count should always be lower than replica(s), ` +
                        `and not used when replica(s) is set to 1`,
                );
            }
        }
        return [...new Set(messages)].map((msg) => ({ msg }));
    },
};

/** maxUnavailable of 0 (or "0%") means no pod may ever be evicted voluntarily. */
function blocksAllDisruptions(pdb: K8sObject): boolean {
    const max = pdb.spec?.maxUnavailable;
    return max === 0 || max === "0" || max === "0%";
}

/** minAvailable must stay below the replica count; "100%" is the same as all replicas. */
function leavesRoomToEvict(replicas: number, minAvailable: unknown): boolean {
    if (typeof minAvailable === "number") return replicas > minAvailable;
    if (minAvailable === "100%") return false;
    if (typeof minAvailable === "string" && /^[0-9]+$/.test(minAvailable)) return replicas > Number(minAvailable);
    return true;
}

/** The budget's matchLabels are a subset of the workload's selector (an empty budget selector selects all). */
function selects(pdb: K8sObject, workloadLabels: Record<string, string> | undefined): boolean {
    const wanted: Record<string, string> = pdb.spec?.selector?.matchLabels ?? {};
    return Object.entries(wanted).every(([k, v]) => workloadLabels?.[k] === v);
}
