/**
 * Section 2.1 with the namespace guardrails: a namespace's ResourceQuota must hold what the stack
 * puts there at its largest (autoscaler maximum, a rolling-update surge pod per Deployment, the
 * unsuspended CronJobs' pods, the volumes); otherwise the quota refuses pods in the cluster (a
 * rollout or a scale-up stalls). A stack policy, so `pulumi up` stops in its preview, before the
 * update creates anything; the offline render runs the same check (policies/spec/quotaFit.ts).
 */
import { specRule, type Finding } from "../pack/rule";
import type { StackView } from "../pack/stack";
import { quotaProblems } from "./quotaFit";

export const rule = specRule<Record<string, never>>({
    name: "namespace-quota-fit",
    description: "Each namespace's ResourceQuota holds the stack's workloads there at their largest (autoscaler maximum, rolling-update surge, CronJob pods, volumes) (sections 2.1, 2.4)",
    check(stack: StackView): Finding[] {
        const problems = quotaProblems(stack.objects.map((o) => o.object));
        return problems.map((message) => {
            const ns = /^quota: namespace ([^:]+):/.exec(message)?.[1];
            const quota = stack.ofKind("ResourceQuota", "").find((o) => stack.namespaceOf(o.object) === ns);
            return { urn: quota?.urn ?? stack.objects[0]?.urn ?? "", message };
        });
    },
});
