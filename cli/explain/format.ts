/** The explain report as Markdown (for people) and JSON (stable, for tools). */
import { ExplainReport } from "./index";
import { BURSTABLE_OOM_RANGE } from "./qos";
import { cpuText, memText } from "./quantity";

export function explainJson(r: ExplainReport): string {
    return JSON.stringify(r, null, 2) + "\n";
}

const cell = (s: unknown) => String(s ?? "").replace(/\|/g, "\\|").replace(/</g, "&lt;").replace(/>/g, "&gt;");
const row = (xs: unknown[]) => `| ${xs.map(cell).join(" | ")} |`;
const table = (head: string[], rows: unknown[][]) => (rows.length === 0 ? ["(none)"] : [row(head), `|${head.map(() => "---").join("|")}|`, ...rows.map(row)]);

/** The few lines a reviewer reads first. */
export function headline(r: ExplainReport): string[] {
    const c = r.capacity;
    const fit = c.fits
        ? `fits ${c.nodes.count} node(s) of ${c.nodes.cpu} CPU / ${c.nodes.memory} (left: ${c.left.cpu} CPU, ${c.left.memory})`
        : `does NOT fit ${c.nodes.count} node(s) of ${c.nodes.cpu} CPU / ${c.nodes.memory}: ${c.unschedulable.length} pod(s) unschedulable; needs ${c.minNodes ?? "more than " + c.nodes.count * 4} node(s)`;
    const d = r.reachability.declared;
    const qos = ["Guaranteed", "Burstable", "BestEffort"].map((q) => `${r.isolation.filter((i) => i.qos === q).length} ${q}`).join(", ");
    return [
        `stack ${r.stack}: ${fit}; demand ${c.totals.cpu} CPU / ${c.totals.memory} of ${c.totals.allocatableCpu} / ${c.totals.allocatableMemory} allocatable; ephemeral storage ${c.totals.ephemeralStorage}${c.totals.allocatableEphemeralStorage ? ` of ${c.totals.allocatableEphemeralStorage}` : ""}`,
        `pods: ${qos}`,
        `flows: ${r.reachability.open.length} open${d ? `; ${d.openNotNeeded.length} open but not needed, ${d.neededClosed.length} needed but closed` : " (no declarations to compare)"}`,
        `autoscalers: ${r.autoscaling.autoscalers.map((a) => `${a.name} ${a.minReplicas}->${a.peak} in ${a.secondsToPeak ?? "?"} s, back to ${a.final} in ${a.secondsToSettle ?? "?"} s`).join("; ") || "none"}`,
    ];
}

export function explainMarkdown(r: ExplainReport): string {
    const out: string[] = [`# Explain: stack \`${r.stack}\``, "", ...headline(r).map((l) => `- ${l}`), ""];
    for (const n of r.notes) out.push(`> **Note:** ${n}`, "");

    out.push("## Resources and isolation (section 2.1)", "");
    out.push(`cpu.shares = request millicores x 1024 / 1000 (2 without a request); cpu.cfs_quota_us = limit millicores x 100; oom_score_adj: Guaranteed -998, BestEffort 1000, Burstable ${BURSTABLE_OOM_RANGE[0]}..${BURSTABLE_OOM_RANGE[1]} (value shown for this stack's node memory).`, "");
    out.push(...table(["Workload", "QoS", "Container", "requests", "limits", "cpu.shares", "cfs_quota_us", "memory.limit_in_bytes", "oom_score_adj", "LimitRange"],
        r.isolation.flatMap((p) => p.containers.map((c) => [
            p.workload, p.qos, `${c.name}${c.init ? " (init)" : ""}`,
            `${c.effective.cpuRequest !== undefined ? cpuText(c.effective.cpuRequest) : "-"} / ${c.effective.memoryRequest !== undefined ? memText(c.effective.memoryRequest) : "-"}`,
            `${c.effective.cpuLimit !== undefined ? cpuText(c.effective.cpuLimit) : "-"} / ${c.effective.memoryLimit !== undefined ? memText(c.effective.memoryLimit) : "-"}`,
            c.cpuShares, c.cfsQuotaUs, c.memoryLimitInBytes, c.oomScoreAdj, c.fromLimitRange.join(", "),
        ]))), "");

    const c = r.capacity;
    out.push("## Capacity", "");
    out.push(`${c.nodes.count} node(s) of ${c.nodes.cpu} CPU / ${c.nodes.memory}; allocatable per node after systemReserved, kubeReserved and evictionHard: ${c.allocatablePerNode.cpu} CPU / ${c.allocatablePerNode.memory}, at most ${c.allocatablePerNode.pods} pods (the kubelet's maxPods).`, "");
    const d = (x: { cpu: number; memory: number; ephemeralStorage: number; pods: number }) => `${x.pods} pods, ${cpuText(x.cpu)} CPU, ${memText(x.memory)}, ${memText(x.ephemeralStorage)} ephemeral storage`;
    out.push(...table(["Demand", "Requests"], [
        ["steady (autoscalers at max)", d(c.demand.steady)],
        ["rolling update surge", d(c.demand.rolloutSurge)],
        [`overlapping CronJobs at ${c.demand.cronJobs.peakAt} (${c.demand.cronJobs.jobs.join(", ") || "none"})`, d(c.demand.cronJobs)],
        ...(c.demand.addons ? [[`add-on charts (${(c.addons ?? []).length})`, d(c.demand.addons)]] : []),
        ["total", d(c.demand.total)],
    ]), "");
    out.push(`**${c.fits ? "Fits" : "Does not fit"}** on ${c.nodes.count} node(s); the fewest nodes of this size it fits on: ${c.minNodes ?? `more than ${c.nodes.count * 4}`}. Left: ${c.left.cpu} CPU, ${c.left.memory}.`, "");
    if (c.unschedulable.length) out.push(`Unschedulable: ${c.unschedulable.join("; ")}`, "");
    if (c.addons?.length) {
        out.push("Add-on charts (their pods as the pinned chart renders them with the values the program emits):", "");
        out.push(...table(["Chart", "Release", "Pods", "CPU", "Memory", "Workloads (kind, pods x request per pod)"], c.addons.map((a) => [
            `${a.chart} ${a.version}`, `${a.namespace}/${a.release}`, a.pods, a.cpu, a.memory,
            a.workloads.map((w) => `${w.workload.split("/").pop()} (${w.kind}, ${w.pods} x ${w.cpuPerPod} / ${w.memoryPerPod})`).join("; "),
        ])), "");
    }
    out.push(...table(["Node", "Pods", "CPU left", "Memory left"], c.perNode.map((n) => [n.node, n.pods, n.cpuLeft, n.memoryLeft])), "");
    out.push("<details><summary>Requests per workload in the total</summary>", "", ...table(["Workload", "Pods", "CPU", "Memory"], c.byWorkload.map((w) => [w.workload, w.pods, w.cpu, w.memory])), "", "</details>", "");
    if (c.manualCronJobs.length) out.push(`Run by hand (suspended or never scheduled), not in the peak: ${c.manualCronJobs.join(", ")}.`, "");
    out.push(...c.assumptions.map((a) => `- ${a}`), "");

    const re = r.reachability;
    out.push("## Reachability (section 2.5)", "");
    if (re.declared) {
        out.push("### Open but not needed", "", ...table(["From", "To", "Ports", "Why"], re.declared.openNotNeeded.map((f) => [f.from, f.to, f.ports.join(", "), f.why])), "");
        out.push("### Needed but closed", "", ...table(["From", "To", "Ports", "Declared by"], re.declared.neededClosed.map((f) => [f.from, f.to, f.ports.join(", "), f.why])), "");
    }
    out.push("### Open flows", "", ...table(["From", "To", "Ports"], re.open.map((f) => [f.from, f.to, f.ports.join(", ")])), "");
    if (re.unselected.length) out.push(`Selected by no policy (open that way): ${re.unselected.map((u) => `${u.endpoint} (${u.direction})`).join(", ")}.`, "");

    const a = r.autoscaling;
    out.push(`## Autoscaling (section 2.4, ${a.loopSeconds} s loop)`, "");
    out.push(...table(["Autoscaler", "Target", "Range", "Metrics", "Profile", "Replicas over time [s, n]", "Peak", "s to peak", "s to settle"],
        a.autoscalers.map((h) => [h.name, h.target, `${h.minReplicas}..${h.maxReplicas}`, h.metrics.join(", "), h.profile, h.changes.map(([t, n]) => `${t}:${n}`).join(" "), h.peak, h.secondsToPeak, h.secondsToSettle])), "");
    out.push("Without an autoscaler:", "", ...table(["Workload", "Kind", "Why"], a.withoutAutoscaler.map((w) => [w.workload, w.kind, w.why])), "");

    const ro = r.rollouts;
    out.push("## Rollouts and disruption (sections 2.2, 3.3)", "");
    out.push(...table(["Workload", "Strategy", "Replicas", "Most pods", "Fewest serving", "Note"], ro.rollouts.map((x) => [x.workload, x.strategy, x.replicas, x.maxPods, x.minServing, x.note])), "");
    out.push(...table(["PodDisruptionBudget", "Workloads", "Pods", "Allowed disruptions", "During a drain"], ro.budgets.map((b) => [b.budget, b.workloads.join(", "), b.expectedPods, b.allowedDisruptions, b.note])), "");
    if (ro.withoutBudget.length) out.push(`Without a PodDisruptionBudget (a drain may evict every pod at once): ${ro.withoutBudget.join(", ")}.`, "");

    out.push("## Data volumes", "");
    out.push("A bigger size in the configuration (components/lib/claimGrowth.ts): the preview names the StatefulSet's replacement and one PersistentVolumeClaimPatch update per claim; a shrink, and a growth of claims whose StorageClass lacks allowVolumeExpansion, are refused by the program itself in the preview before anything changes (components/lib/claimGuard.ts: the last deploy's sizes from the stack's outputs, the claims' class read from the cluster).", "");
    out.push(...table(["StatefulSet", "Claim template", "Size", "Config key", "StorageClass", "Claims", "A bigger size"],
        (r.volumes?.volumes ?? []).map((v) => [v.workload, v.template, v.size, v.configKey ?? "-", v.storageClass ?? "(cluster default)", v.claims.join(", "), v.onGrowth])), "");
    out.push("The stack's own claims (a pulumi resource each): a bigger size expands the claim in place where its StorageClass allows volume expansion; a smaller one the API server refuses; a new class, access mode or namespace deletes the claim with its data and creates it again (a protected claim fails the preview instead).", "");
    out.push(...table(["Claim", "Size", "StorageClass", "Access modes"], (r.volumes?.claims ?? []).map((c) => [c.claim, c.size, c.storageClass ?? "(cluster default)", c.accessModes.join(", ")])), "");

    out.push("## Names (sections 2.2, 2.3)", "");
    out.push(...table(["Service", "DNS name", "Type", "Ports"], r.names.services.map((s) => [s.service, s.dns, s.headless ? "headless" : s.type, s.ports.join(", ")])), "");
    out.push(...table(["StatefulSet pod", "DNS name", "Problem"], r.names.statefulPods.map((p) => [`${p.statefulSet}-${p.ordinal}`, p.dns, p.problem ?? ""])), "");
    return out.join("\n").trimEnd() + "\n";
}
