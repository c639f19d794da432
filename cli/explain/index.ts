/**
 * Explain: what a stack will do on the cluster, from its offline render (objects and rendered
 * node and declared-flow files), computed with the specification's formulas.
 */
import * as YAML from "yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { AddonRelease, addonModel } from "./addonPods";
import { autoscaling, AutoscalingReport } from "./autoscaling";
import { capacity, CapacityReport, nodesFromFiles } from "./capacity";
import { names } from "./names";
import { isolationOf, limitRangesOf, PodIsolation } from "./qos";
import { DeclaredFlows, reachability, Reachability } from "./reachability";
import { rollouts, RolloutReport } from "./rollout";
import { volumes, VolumeReport } from "./volumes";
import { workloadsOf } from "./workloads";

export const EXPLAIN_FORMAT_VERSION = 1;
export const NODE_POOL_FILE = "node/pool.yaml";
export const KUBELET_FILE = "node/kubelet-config.yaml";
export const DECLARED_FLOWS_FILE = "explain/declared-flows.json";

export interface ExplainInput {
    stack: string;
    objects: K8sObject[];
    /** The render's files (relative path -> text): node pool, node agent configuration, declared flows. */
    files: Record<string, string>;
    /** The render's helm Releases (the add-ons): their charts' pods count in the capacity (addonPods.ts). */
    releases?: AddonRelease[];
}

export interface ExplainReport {
    formatVersion: number;
    stack: string;
    isolation: PodIsolation[];
    capacity: CapacityReport;
    reachability: Reachability;
    autoscaling: AutoscalingReport;
    rollouts: RolloutReport;
    names: ReturnType<typeof names>;
    /** Each StatefulSet's claim templates and what a bigger size does (volumes.ts). */
    volumes: VolumeReport;
    notes: string[];
}

export function explain(input: ExplainInput): ExplainReport {
    const notes: string[] = [];
    const pool = input.files[NODE_POOL_FILE];
    const kubelet = input.files[KUBELET_FILE];
    if (!pool || !kubelet) throw new Error(`the render of ${input.stack} has no ${!pool ? NODE_POOL_FILE : KUBELET_FILE}: explain needs the node pool and the node agent's reservations`);
    const nodes = nodesFromFiles(YAML.parse(pool), YAML.parse(kubelet));
    let declared: DeclaredFlows[] | undefined;
    if (input.files[DECLARED_FLOWS_FILE]) declared = JSON.parse(input.files[DECLARED_FLOWS_FILE]);
    else notes.push(`no ${DECLARED_FLOWS_FILE} in the render: flows are not compared with the components' declarations`);
    const workloads = workloadsOf(input.objects);
    const limitRanges = limitRangesOf(input.objects);
    const addons = addonModel(input.releases ?? []);
    notes.push(...addons.notes);
    if (input.releases === undefined) notes.push("no helm Releases given: the add-on charts' pods are not counted in the capacity");
    return {
        formatVersion: EXPLAIN_FORMAT_VERSION,
        stack: input.stack,
        isolation: workloads.map((w) => isolationOf(w, limitRanges, nodes.pool.memory)),
        capacity: capacity({ workloads, objects: input.objects, limitRanges, pool: nodes.pool, agent: nodes.agent, addonWorkloads: workloadsOf(addons.objects), addonCharts: addons.charts }),
        reachability: reachability(input.objects, workloads, declared),
        autoscaling: autoscaling(input.objects, workloads),
        rollouts: rollouts(input.objects, workloads),
        names: names(input.objects, workloads),
        volumes: volumes(input.objects, workloads),
        notes,
    };
}
