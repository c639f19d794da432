/**
 * What the change does on the cluster: the explain reports (cli/explain) of both revisions of a
 * stack compared, as short sentences ("booking/booking → data/postgres: 5432/TCP opened",
 * "data/redis: Guaranteed → Burstable", "prod no longer fits 3 nodes of 8 CPU / 32Gi"), and the
 * reachability changes as a Mermaid flowchart for the pull-request comment.
 *
 * A side that carries its render's files (node pool, node agent reservations, declared flows) is
 * explained with them; a side without them is explained with the working tree's node files, and
 * its flows are not compared with declarations (the report says so).
 */
import type { K8sObject } from "../../policies/gatekeeper/types";
import { loadConfig, mapSource } from "../../config";
import { nodeFiles } from "../../components/platform/nodeSettings";
import { explain, ExplainReport } from "../explain/index";
import { addonReleases } from "../explain/addonPods";
import type { PolicyResource } from "./policy";
import { readStackValues, REPO_ROOT } from "../harness/stackConfig";
import { volumeChanges } from "../explain/volumes";

export type ExplainArea = "capacity" | "isolation" | "reachability" | "declared flows" | "autoscaling" | "rollouts" | "volumes" | "names";

export interface ExplainChange {
    area: ExplainArea;
    text: string;
}

export interface FlowChange {
    from: string;
    to: string;
    opened: string[];
    closed: string[];
}

export type ExplainDiff =
    | { available: true; changes: ExplainChange[]; flows: FlowChange[]; notes: string[] }
    | { available: false; reason: string };

export interface ExplainSide {
    objects: K8sObject[];
    /** The render's files, when the side has them. */
    files?: Record<string, string>;
    /** The render's registered resources (its helm Releases: the add-on charts' pods count in the capacity). */
    resources?: PolicyResource[];
}

const releasesOf = (side: ExplainSide) => (side.resources ? addonReleases(side.resources.map((r) => ({ type: r.type, name: r.name, inputs: r.props }))) : undefined);

/** The node files of a stack from the working tree's typed configuration. */
export function workingTreeNodeFiles(stack: string, root = REPO_ROOT): Record<string, string> {
    const values = readStackValues(stack, {}, root);
    const prefix = `${values.project}:`;
    const raw = Object.fromEntries(Object.entries(values.config).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]));
    // Node files do not depend on image digests: a prod tag without a record stays a tag here.
    return nodeFiles(loadConfig(mapSource(values.project, stack, raw, { digestMode: "tag" })));
}

const key = (from: string, to: string) => `${from}\u0000${to}`;

function flowChanges(base: ExplainReport, head: ExplainReport): FlowChange[] {
    const ports = (r: ExplainReport) => new Map(r.reachability.open.map((f) => [key(f.from, f.to), new Set(f.ports)]));
    const b = ports(base);
    const h = ports(head);
    const out: FlowChange[] = [];
    for (const k of [...new Set([...b.keys(), ...h.keys()])].sort()) {
        const [from, to] = k.split("\u0000");
        const was = b.get(k) ?? new Set<string>();
        const now = h.get(k) ?? new Set<string>();
        const opened = [...now].filter((p) => !was.has(p));
        const closed = [...was].filter((p) => !now.has(p));
        if (opened.length || closed.length) out.push({ from, to, opened, closed });
    }
    return out;
}

const nodesText = (r: ExplainReport) => `${r.capacity.nodes.count} node(s) of ${r.capacity.nodes.cpu} CPU / ${r.capacity.nodes.memory}`;

function capacityChanges(stack: string, base: ExplainReport, head: ExplainReport): string[] {
    const b = base.capacity;
    const h = head.capacity;
    const out: string[] = [];
    if (nodesText(base) !== nodesText(head)) out.push(`nodes: ${nodesText(base)} → ${nodesText(head)}`);
    if (b.fits && !h.fits) out.push(`${stack} no longer fits ${nodesText(head)} (needs ${h.minNodes ?? "more"})`);
    if (!b.fits && h.fits) out.push(`${stack} now fits ${nodesText(head)}`);
    if (b.minNodes !== h.minNodes) out.push(`fewest nodes it fits on: ${b.minNodes ?? "none"} → ${h.minNodes ?? "none"}`);
    if (b.totals.cpu !== h.totals.cpu || b.totals.memory !== h.totals.memory) out.push(`requests at peak: ${b.totals.cpu} CPU / ${b.totals.memory} → ${h.totals.cpu} CPU / ${h.totals.memory}`);
    return out;
}

function isolationChanges(base: ExplainReport, head: ExplainReport): string[] {
    const out: string[] = [];
    const b = new Map(base.isolation.map((p) => [p.workload, p]));
    for (const p of head.isolation) {
        const was = b.get(p.workload);
        if (!was) continue;
        if (was.qos !== p.qos) out.push(`${p.workload}: ${was.qos} → ${p.qos}`);
        const containers = new Map(was.containers.map((c) => [c.name, c]));
        for (const c of p.containers) {
            const o = containers.get(c.name);
            if (!o) continue;
            const fields: Array<[string, unknown, unknown]> = [["cpu.shares", o.cpuShares, c.cpuShares], ["cpu.cfs_quota_us", o.cfsQuotaUs, c.cfsQuotaUs], ["memory.limit_in_bytes", o.memoryLimitInBytes, c.memoryLimitInBytes], ["oom_score_adj", o.oomScoreAdj, c.oomScoreAdj]];
            const changed = fields.filter(([, x, y]) => x !== y).map(([n, x, y]) => `${n} ${x} → ${y}`);
            if (changed.length) out.push(`${p.workload}/${c.name}: ${changed.join(", ")}`);
        }
    }
    return out;
}

function autoscalingChanges(base: ExplainReport, head: ExplainReport): string[] {
    const out: string[] = [];
    const b = new Map(base.autoscaling.autoscalers.map((a) => [a.name, a]));
    const h = new Map(head.autoscaling.autoscalers.map((a) => [a.name, a]));
    for (const [name, a] of h) {
        const was = b.get(name);
        if (!was) out.push(`${name}: new autoscaler ${a.minReplicas}..${a.maxReplicas} on ${a.target}`);
        else {
            const d = [["range", `${was.minReplicas}..${was.maxReplicas}`, `${a.minReplicas}..${a.maxReplicas}`], ["s to peak", was.secondsToPeak, a.secondsToPeak], ["s to settle", was.secondsToSettle, a.secondsToSettle], ["peak", was.peak, a.peak]].filter(([, x, y]) => x !== y);
            if (d.length) out.push(`${name}: ${d.map(([n, x, y]) => `${n} ${x} → ${y}`).join(", ")}`);
        }
    }
    for (const name of b.keys()) if (!h.has(name)) out.push(`${name}: autoscaler removed`);
    return out;
}

function rolloutChanges(base: ExplainReport, head: ExplainReport): string[] {
    const out: string[] = [];
    const b = new Map(base.rollouts.rollouts.map((r) => [r.workload, r]));
    for (const r of head.rollouts.rollouts) {
        const was = b.get(r.workload);
        if (was && (was.maxPods !== r.maxPods || was.minServing !== r.minServing)) out.push(`${r.workload}: during a rollout at most ${was.maxPods} → ${r.maxPods} pods, at least ${was.minServing} → ${r.minServing} serving`);
    }
    const pdb = new Map(base.rollouts.budgets.map((x) => [x.budget, x]));
    for (const x of head.rollouts.budgets) {
        const was = pdb.get(x.budget);
        if (was && was.allowedDisruptions !== x.allowedDisruptions) out.push(`${x.budget}: a drain may evict ${was.allowedDisruptions} → ${x.allowedDisruptions} pod(s) at a time`);
    }
    return out;
}

function setChanges(area: string, before: string[], after: string[]): string[] {
    const b = new Set(before);
    const a = new Set(after);
    return [...[...a].filter((x) => !b.has(x)).map((x) => `${area} added: ${x}`), ...[...b].filter((x) => !a.has(x)).map((x) => `${area} removed: ${x}`)];
}

export function compareExplain(stack: string, base: ExplainReport, head: ExplainReport): { changes: ExplainChange[]; flows: FlowChange[] } {
    const flows = flowChanges(base, head);
    const changes: ExplainChange[] = [];
    const push = (area: ExplainArea, texts: string[]) => changes.push(...texts.map((text) => ({ area, text })));
    push("capacity", capacityChanges(stack, base, head));
    push("isolation", isolationChanges(base, head));
    push("reachability", flows.flatMap((f) => [
        ...(f.opened.length ? [`${f.from} → ${f.to}: ${f.opened.join(", ")} opened`] : []),
        ...(f.closed.length ? [`${f.from} → ${f.to}: ${f.closed.join(", ")} closed`] : []),
    ]));
    if (base.reachability.declared && head.reachability.declared) {
        const list = (r: ExplainReport) => [
            ...r.reachability.declared!.neededClosed.map((f) => `needed but closed: ${f.from} → ${f.to} ${f.ports.join(", ")}`),
            ...r.reachability.declared!.openNotNeeded.map((f) => `open but not needed: ${f.from} → ${f.to} ${f.ports.join(", ")}`),
        ];
        const was = new Set(list(base));
        const now = new Set(list(head));
        push("declared flows", [...[...now].filter((x) => !was.has(x)).map((x) => `new ${x}`), ...[...was].filter((x) => !now.has(x)).map((x) => `resolved ${x}`)]);
    }
    push("autoscaling", autoscalingChanges(base, head));
    push("rollouts", rolloutChanges(base, head));
    // A base explained without the volumes section (an older report shape) has nothing to compare.
    if (base.volumes && head.volumes) push("volumes", volumeChanges(base.volumes, head.volumes).map((v) => v.text));
    push("names", setChanges("name", [...base.names.services.map((s) => s.dns), ...base.names.statefulPods.map((p) => p.dns)], [...head.names.services.map((s) => s.dns), ...head.names.statefulPods.map((p) => p.dns)]));
    return { changes, flows };
}

/** The explain changes of a stack between two rendered sides. */
export function explainDiff(stack: string, base: ExplainSide, head: ExplainSide): ExplainDiff {
    try {
        const without: string[] = [];
        let fallback: Record<string, string> | undefined;
        const filesOf = (side: ExplainSide, name: string) => {
            if (side.files && Object.keys(side.files).length > 0) return side.files;
            fallback ??= workingTreeNodeFiles(stack);
            without.push(name);
            return fallback;
        };
        const b = explain({ stack, objects: base.objects, files: filesOf(base, "base"), releases: releasesOf(base) });
        const h = explain({ stack, objects: head.objects, files: filesOf(head, "head"), releases: releasesOf(head) });
        const notes = without.length === 0 ? [] : [`${without.join(" and ")} explained with the working tree's node pool and reservations (no render files on ${without.length === 1 ? "that side" : "either side"}); flows not compared with declarations`];
        return { available: true, ...compareExplain(stack, b, h), notes };
    } catch (err) {
        return { available: false, reason: `explain failed: ${err instanceof Error ? err.message : String(err)}` };
    }
}

const mermaidId = (s: string) => "n_" + s.replace(/[^A-Za-z0-9]/g, "_");
const mermaidLabel = (s: string) => s.replace(/["<>]/g, "");

/** The reachability changes as a Mermaid flowchart (GitHub renders it): solid arrows opened, dotted closed. */
export function mermaidFlows(flows: FlowChange[], maxEdges = 60): string[] {
    if (flows.length === 0) return [];
    const lines = ["flowchart LR"];
    const nodes = new Set<string>();
    let edges = 0;
    for (const f of flows) {
        for (const [ports, arrow, sign] of [[f.opened, "-->", "+"], [f.closed, "-.->", "−"]] as const) {
            if (ports.length === 0 || edges >= maxEdges) continue;
            for (const n of [f.from, f.to]) if (!nodes.has(n)) (nodes.add(n), lines.push(`  ${mermaidId(n)}["${mermaidLabel(n)}"]`));
            lines.push(`  ${mermaidId(f.from)} ${arrow}|"${sign} ${mermaidLabel(ports.join(", "))}"| ${mermaidId(f.to)}`);
            edges++;
        }
    }
    return lines;
}
