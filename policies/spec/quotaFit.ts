/**
 * Each namespace's ResourceQuota must hold the workloads the program puts there at their largest
 * (autoscaler maximum) plus one rolling-update surge pod per Deployment, every unsuspended
 * CronJob's pod and the volumes: a quota they do not fit blocks a rollout in the cluster.
 * Checked on the rendered objects by the render, and by the pack's namespace-quota-fit rule at
 * `pulumi preview` / `pulumi up` (a stack policy: before the update creates anything).
 */
import { parseBytesMillis, parseCpuMillis } from "../gatekeeper/engine/quantity";
import type { K8sObject } from "../gatekeeper/types";

// The pack's own quantity parsing (the pack is compiled on its own, without the config module).
const cpuMillis = (q: string): number => parseCpuMillis(q) ?? 0;
const quantityBytes = (q: string): number => (parseBytesMillis(q) ?? 0) / 1000;

interface Demand {
    requestsCpu: number;
    limitsCpu: number;
    requestsMemory: number;
    limitsMemory: number;
    storage: number;
    pods: number;
}

const zero = (): Demand => ({ requestsCpu: 0, limitsCpu: 0, requestsMemory: 0, limitsMemory: 0, storage: 0, pods: 0 });

// Objects are rendered Kubernetes objects of any kind; `any` keeps the walk readable.
/* eslint-disable @typescript-eslint/no-explicit-any */
export function quotaProblems(objects: readonly K8sObject[]): string[] {
    const hpaMax = new Map(objects.filter((o) => o.kind === "HorizontalPodAutoscaler").map((h: any) => [`${h.metadata.namespace}/${h.spec.scaleTargetRef.name}`, h.spec.maxReplicas as number]));
    const demand = new Map<string, Demand>();
    const add = (ns: string, pods: number, spec: any): Demand => {
        const d = demand.get(ns) ?? zero();
        for (const c of spec?.containers ?? []) {
            const r = c.resources ?? {};
            d.requestsCpu += pods * (r.requests?.cpu ? cpuMillis(String(r.requests.cpu)) : 0);
            d.requestsMemory += pods * (r.requests?.memory ? quantityBytes(String(r.requests.memory)) : 0);
            d.limitsCpu += pods * (r.limits?.cpu ? cpuMillis(String(r.limits.cpu)) : 0);
            d.limitsMemory += pods * (r.limits?.memory ? quantityBytes(String(r.limits.memory)) : 0);
        }
        d.pods += pods;
        demand.set(ns, d);
        return d;
    };
    for (const o of objects as any[]) {
        const ns = o.metadata?.namespace;
        if (!ns) continue;
        if (o.kind === "Deployment") {
            const n = hpaMax.get(`${ns}/${o.metadata.name}`) ?? o.spec?.replicas ?? 1;
            add(ns, n + (o.spec?.strategy?.type === "Recreate" ? 0 : 1), o.spec?.template?.spec);
        } else if (o.kind === "StatefulSet") {
            const n = hpaMax.get(`${ns}/${o.metadata.name}`) ?? o.spec?.replicas ?? 1;
            const d = add(ns, n, o.spec?.template?.spec);
            for (const t of o.spec?.volumeClaimTemplates ?? []) d.storage += n * quantityBytes(String(t.spec.resources.requests.storage));
        } else if (o.kind === "CronJob" && !o.spec?.suspend) add(ns, 1, o.spec?.jobTemplate?.spec?.template?.spec);
        else if (o.kind === "Job") add(ns, 1, o.spec?.template?.spec);
        else if (o.kind === "PersistentVolumeClaim") add(ns, 0, undefined).storage += quantityBytes(String(o.spec.resources.requests.storage));
    }
    const problems: string[] = [];
    for (const [ns, d] of [...demand].sort(([a], [b]) => (a < b ? -1 : 1))) {
        const quota: any = objects.find((o: any) => o.kind === "ResourceQuota" && o.metadata?.namespace === ns);
        const hard = quota?.spec?.hard;
        if (!hard) continue;
        const check = (resource: string, need: number, have: number | undefined, show: (n: number) => string) => {
            if (have !== undefined && need > have)
                problems.push(`quota: namespace ${ns}: the workloads need ${resource} ${show(need)}, the ResourceQuota allows ${show(have)}; raise it with guardrailsQuotaOverrides (e.g. "${ns}:${resource}=...") or shrink the workloads`);
        };
        const millis = (n: number) => `${n}m`;
        const mi = (n: number) => `${Math.ceil(n / 2 ** 20)}Mi`;
        check("requests.cpu", d.requestsCpu, hard["requests.cpu"] !== undefined ? cpuMillis(String(hard["requests.cpu"])) : undefined, millis);
        check("limits.cpu", d.limitsCpu, hard["limits.cpu"] !== undefined ? cpuMillis(String(hard["limits.cpu"])) : undefined, millis);
        check("requests.memory", d.requestsMemory, hard["requests.memory"] !== undefined ? quantityBytes(String(hard["requests.memory"])) : undefined, mi);
        check("limits.memory", d.limitsMemory, hard["limits.memory"] !== undefined ? quantityBytes(String(hard["limits.memory"])) : undefined, mi);
        check("requests.storage", d.storage, hard["requests.storage"] !== undefined ? quantityBytes(String(hard["requests.storage"])) : undefined, mi);
        check("pods", d.pods, hard.pods !== undefined ? Number(hard.pods) : undefined, String);
    }
    return problems;
}
