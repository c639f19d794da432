/**
 * `npm run explain` on the dev render (rendered once, shared by every test of this file): every
 * section is computed from the real program's objects and rendered node and flow files.
 */
import assert from "node:assert/strict";
import { before, describe, it } from "node:test";
import { explainRender, parseExplainArgs } from "../cli/explain";
import { explainJson, explainMarkdown } from "../cli/explain/format";
import type { ExplainReport } from "../cli/explain/index";
import { renderStack } from "./render";

describe("explain on the dev render", () => {
    let r: ExplainReport;
    before(async () => {
        const result = await renderStack("dev");
        assert.deepEqual(result.errors, []);
        r = explainRender(result);
    });
    const open = (from: string, to: string) => r.reachability.open.find((f) => f.from === from && f.to === to)?.ports ?? [];

    it("isolation: the agent server's 250m / 512Mi request and 1 CPU / 2Gi limit (Pulumi.dev.yaml) give 256 shares, 100000 quota, a Burstable score", () => {
        const agent = r.isolation.find((p) => p.workload.startsWith("agent/agent-server"))!;
        assert.equal(agent.qos, "Burstable");
        const c = agent.containers.find((x) => !x.init)!;
        assert.deepEqual([c.cpuShares, c.cfsQuotaUs, c.memoryLimitInBytes], [256, 100000, String(2 * 2 ** 30)]);
        // 1000 - 1000 x 512Mi / 16Gi = 968.75 -> 969 (integer division of the node agent: 1000 - 31)
        assert.equal(c.oomScoreAdj, 969);
        for (const p of r.isolation) for (const x of p.containers) assert.ok(x.oomScoreAdj >= 2 && x.oomScoreAdj <= 999, `${p.workload}/${x.name}: Burstable score out of 2..999`);
    });
    it("capacity: one node of 4 CPU / 16Gi less 250m + 250m reserved; the stack with its add-ons fits with CPU left", () => {
        assert.equal(r.capacity.nodes.count, 1);
        assert.equal(r.capacity.allocatablePerNode.cpu, "3500m");
        assert.equal(r.capacity.fits, true, r.capacity.unschedulable.join("; "));
        assert.equal(r.capacity.minNodes, 1);
        assert.equal(r.capacity.addons.length, 7, "every add-on chart's pods are counted");
        assert.ok(r.capacity.demand.cronJobs.jobs.length >= 2, "the 03:00 and 03:30 backups overlap");
        assert.ok(r.capacity.manualCronJobs.some((j) => j.endsWith("-restore")), "restores are run by hand");
    });
    it("reachability: internet -> ingress controller -> booking, DNS for every pod with egress rules, nothing from booking into data", () => {
        // 8443 (the controller's admission webhook) is admitted from guardrailsApiServerCidr, 0.0.0.0/0 unless a stack narrows it.
        assert.deepEqual(open("internet", "ingress-nginx/(chart pods)"), ["80/TCP", "443/TCP", "8443/TCP"]);
        assert.ok(open("ingress-nginx/(chart pods)", "booking/booking").length > 0);
        assert.deepEqual(open("booking/booking", "kube-system/cluster-dns"), ["53/TCP", "53/UDP"]);
        assert.ok(!r.reachability.open.some((f) => f.from === "booking/booking" && f.to.startsWith("data/")));
        assert.ok(!r.reachability.open.some((f) => f.from === "internet" && f.to.startsWith("data/")), "no data store is reachable from the internet");
        assert.ok(r.reachability.declared, "the render carries the declared flows");
        assert.deepEqual(r.reachability.declared!.openNotNeeded, []);
    });
    it("autoscaling: every HPA reaches its maximum under the step up and returns to its minimum; the rest say why", () => {
        assert.ok(r.autoscaling.autoscalers.length >= 1);
        for (const a of r.autoscaling.autoscalers) assert.deepEqual([a.peak, a.final], [a.maxReplicas, a.minReplicas], a.name);
        assert.ok(r.autoscaling.withoutAutoscaler.every((w) => w.why.length > 0));
    });
    it("rollouts, budgets and names", () => {
        assert.ok(r.rollouts.rollouts.every((x) => x.maxPods >= x.replicas && x.minServing <= x.replicas));
        assert.ok(r.names.statefulPods.length > 0);
        assert.deepEqual(r.names.statefulPods.filter((p) => p.problem), []);
        for (const p of r.names.statefulPods) assert.match(p.dns, /^[a-z0-9-]+-\d+\.[a-z0-9-]+\.[a-z0-9-]+\.svc\.cluster\.local$/);
    });
    it("formats: JSON is stable and parseable, Markdown has every section", () => {
        const json = explainJson(r);
        assert.equal(json, explainJson(JSON.parse(json)));
        assert.equal(JSON.parse(json).formatVersion, 1);
        const md = explainMarkdown(r);
        for (const h of ["## Resources and isolation", "## Capacity", "## Reachability", "## Autoscaling", "## Rollouts and disruption", "## Names"]) assert.ok(md.includes(h), h);
    });
    it("arguments: a stack is required, the format is md or json", () => {
        assert.deepEqual(parseExplainArgs(["--stack", "dev", "--format", "json"]), { stack: "dev", format: "json" });
        assert.throws(() => parseExplainArgs([]), /--stack is required/);
        assert.throws(() => parseExplainArgs(["--stack", "nope"]), /no stack "nope"/);
        assert.throws(() => parseExplainArgs(["--stack", "dev", "--format", "yaml"]), /md or json/);
    });
});
