/**
 * Judges objects the way the environment's two enforcement points would: the CrossGuard pack's
 * engine (the stack's deny constraints and its mandatory specification rules) and the generated
 * ValidatingAdmissionPolicies with a Deny action (their CEL evaluated offline, policies/admission/
 * simulate.ts). Used for objects the preview never sees: the GitOps children's workloads as their
 * charts render them (test/childAdmission.test.ts, tools/admission/charts.ts).
 */
import { evaluate } from "../../policies/gatekeeper/engine";
import { compileWildcardList } from "../../policies/gatekeeper/engine/wildcard";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { constraintFiles, loadCatalogue, specSettings } from "../../policies/admission/catalogue";
import { generateAdmissionPolicies, generateSpecAdmissionPolicies } from "../../policies/admission/generate";
import { admit } from "../../policies/admission/simulate";
import { specRules } from "../../policies/pack/policies";
import { resourceOf } from "../../policies/pack/resources";
import { stackView } from "../../policies/pack/stack";

export const POD_KINDS = new Set(["Pod", "Deployment", "StatefulSet", "DaemonSet", "ReplicaSet", "ReplicationController", "Job", "CronJob"]);

export interface Judgement {
    /** Objects that carry a pod (a Pod or a workload's pod template). */
    podObjects: number;
    /** One line per (object, enforcement point, rule) that denies. */
    denials: string[];
    /** The pod-carrying objects with at least one denial. */
    deniedPodObjects: number;
}

const id = (o: K8sObject) => `${o.kind} ${o.metadata?.namespace ?? "-"}/${o.metadata?.name}`;

/** withoutConfigExclusions: judge as if the Gatekeeper Config excluded no namespace (what the add-ons' namespaces would meet). */
export function judge(stack: string, tier: string, objects: readonly K8sObject[], opts: { withoutConfigExclusions?: boolean } = {}): Judgement {
    const loaded = loadCatalogue(constraintFiles(stack, tier));
    const catalogue = opts.withoutConfigExclusions ? { ...loaded, excludedNamespaces: [] } : loaded;
    const excluded = compileWildcardList(catalogue.excludedNamespaces);
    // The API server labels every namespace with its name.
    const namespaceLabels = (ns: string) => ({ "kubernetes.io/metadata.name": ns });
    const denials: string[] = [];
    const denied = new Set<number>();
    for (const constraint of catalogue.constraints.filter((c) => c.enforcementAction === "deny")) {
        for (const r of evaluate(objects, [constraint], { isNamespaceExcluded: excluded }, { inventory: objects })) {
            denials.push(`${id(objects[r.objectIndex])}: CrossGuard ${constraint.kind}/${constraint.name}: ${r.message}`);
            denied.add(r.objectIndex);
        }
        const generated = generateAdmissionPolicies([constraint], { excludedNamespaces: catalogue.excludedNamespaces });
        generated.policies.forEach((policy, p) => {
            objects.forEach((o, i) => {
                const outcome = admit(policy, generated.bindings[p], o, namespaceLabels);
                if (!outcome.matched || (outcome.failed.length === 0 && outcome.errors.length === 0)) return;
                denials.push(`${id(o)}: admission ${policy.metadata.name}: ${[...outcome.failed, ...outcome.errors].join("; ")}`);
                denied.add(i);
            });
        });
    }
    for (const setting of specSettings(stack, tier).filter((s) => s.enforcementLevel === "mandatory")) {
        const rule = specRules.find((r) => r.name === setting.rule.name)!;
        const generated = generateSpecAdmissionPolicies([setting], { excludedNamespaces: catalogue.excludedNamespaces });
        objects.forEach((o, i) => {
            const ns = o.metadata?.namespace;
            if ((ns === undefined || !excluded(ns)) && rule.check(stackView([resourceOf(o)]), setting.config as never).length > 0) {
                denials.push(`${id(o)}: CrossGuard ${rule.name}`);
                denied.add(i);
            }
            generated.policies.forEach((policy, p) => {
                const outcome = admit(policy, generated.bindings[p], o, namespaceLabels);
                if (!outcome.matched || (outcome.failed.length === 0 && outcome.errors.length === 0)) return;
                denials.push(`${id(o)}: admission ${policy.metadata.name}: ${[...outcome.failed, ...outcome.errors].join("; ")}`);
                denied.add(i);
            });
        });
    }
    const podIdx = objects.map((o, i) => (POD_KINDS.has(String(o.kind)) ? i : -1)).filter((i) => i >= 0);
    return { podObjects: podIdx.length, denials, deniedPodObjects: podIdx.filter((i) => denied.has(i)).length };
}
