/**
 * npm run e2e, the steps (tools/e2e/run.sh starts this and stops what it leaves running): the ci
 * stack against a real control plane on loopback, first through kubectl, then through the Pulumi
 * engine, then prod. One line per step with its time, RESULT lines under it, the speed figures, and
 * last `e2e: N passed, N failed, N skipped`.
 *
 * A step family is a module of ./steps exporting `async (ctx: Context, io: StepIO) => void`
 * functions: ctx has the paths, the toolchain, and typed helpers for kubectl, the engine and
 * background processes (./harness/context.ts); io is the step's log and RESULT lines.
 */
import * as fs from "node:fs";
import { Context, type StepIO } from "./harness/context";
import { RunEnded, Steps } from "./harness/steps";
import * as admission from "./steps/admission";
import * as children from "./steps/children";
import * as leverLab from "./steps/leverLab";
import * as namespaceMove from "./steps/namespaceMove";
import * as cluster from "./steps/cluster";
import * as dev from "./steps/dev";
import { skipReason as addonChartsSkipReason } from "./steps/addons";
import * as objects from "./steps/objects";
import * as pulumi from "./steps/pulumi";
import * as realnode from "./steps/realnode";
import * as realnodeBackups from "./steps/realnodeBackups";
import * as realnodeChat from "./steps/realnodeChat";
import * as realnodeFlows from "./steps/realnodeFlows";
import * as realnodeWorkflow from "./steps/realnodeWorkflow";
import * as speed from "./steps/speed";
import * as volumeGrowth from "./steps/volumeGrowth";

const ENGINE_STEPS = [
    "1 pulumi up ci: converges, cluster holds exactly the render",
    "2 pulumi preview --expect-no-changes: no change",
    "3 drift: found by preview --refresh, repaired by up",
    "4 config change: in place / replaced as previewed; npm run diff agrees",
    "4b volume growth: a claim grows in place, its StatefulSet re-created around its pods; shrink refused",
    "5 pulumi preview --policy-pack policies: passes; broken stack refused",
    "6 chart hooks through helm.v3.Release: install, upgrade, uninstall",
    "7 prod converges on kwok nodes shaped like its pool",
    "8 pulumi destroy: nothing of either stack left",
    "4c refused twice in a row (namespace move, shrink; the move again with outputs lacking the record) by up without preview: nothing changes, claims and outputs kept",
] as const;

async function controlPlane(ctx: Context, run: Steps): Promise<void> {
    ctx.ports = { etcd: await cluster.freePort(), etcdPeer: await cluster.freePort(), api: await cluster.freePort() };
    await run.must(`toolchain in ${ctx.cache}`, cluster.toolchain);
    await run.must(`offline render of stack ${cluster.STACK}`, cluster.render);
    await run.must("PKI: CA, serving and client certificates, kubeconfigs", cluster.pki);
    await run.must(`etcd ${ctx.tools.etcd}`, cluster.etcd);
    await run.must(`kube-apiserver ${ctx.tools.k8s}`, cluster.apiserver);
    await run.must("controller manager, scheduler, kwok", cluster.controllers);
    await run.must("fake node sized like the ci stack's node", cluster.node);
    await run.must("CRDs the stack uses (pinned schemas)", cluster.crds);
    await run.must("stand-ins: pre-bound volumes", cluster.volumes);
}

async function kubectlPath(run: Steps): Promise<void> {
    await run.must("server-side apply of the render", objects.apply);
    await run.step("workloads Available, Jobs complete, CronJobs admitted", (c, io) => objects.workloads(c, io));
    await run.step("cluster holds exactly the render", (c, io) => objects.compare(c, io));
    await run.step("second apply: no change", objects.noChange);
    await run.step("drift found by diff, then repaired", objects.drift);
    // The GitOps children from the real charts (OPS_CHART_SOURCES), into the deployed ci render
    // with its own admission policies, quotas and limit ranges in force.
    const noCharts = children.childrenSkipReason(run.ctx);
    const childSteps = [
        ["GitOps children (real charts) applied as Argo CD would", (c: Context, io: StepIO) => children.children(c, io, "ci")],
        ["GitOps children upgraded from the previous minor, no immutable field", (c: Context, io: StepIO) => children.upgrades(c, io, "ci")],
    ] as const;
    for (const [name, fn] of childSteps) {
        if (noCharts) run.skip(name, noCharts);
        else await run.step(name, fn);
    }
    await run.step("delete every object of the render, nothing left", objects.teardown);
}

/** The engine steps; the engine's state (its chart repository still serving) for the real node's steps. */
async function enginePath(ctx: Context, run: Steps): Promise<pulumi.EngineState | undefined> {
    const setupName = "pulumi project, stacks ci and prod, secrets, add-on chart stand-ins";
    const absent = ctx.missing(ctx.tools.engine);
    if (absent.length) {
        run.skip(setupName, `not in ${ctx.cache}: ${absent.join(" ")}; build with: npm run e2e:build`);
        for (const s of ENGINE_STEPS) run.skip(s, "the engine set-up did not run (above)");
        return;
    }
    let state: pulumi.EngineState | undefined;
    if (!(await run.step(setupName, async (c, io) => void (state = await pulumi.setup(c, io)))) || !state) {
        for (const s of ENGINE_STEPS) run.skip(s, "the engine set-up did not run (above)");
        return;
    }
    const engineState = state;
    const ingress = pulumi.ingressStandIn(ctx);
    // The fair comparisons of issue 29 (tools/e2e/steps/speed.ts): kubectl from the engine's start
    // with the engine's waits, and preview --refresh against kubectl diff (both read the cluster).
    const fairSpeed: string[] = [];
    try {
        await run.step("speed: kubectl converge from the engine's start, with its waits", (c, io) => speed.fairConvergeStep(c, io, fairSpeed));
        await run.step(ENGINE_STEPS[0], pulumi.up);
        await run.step(ENGINE_STEPS[1], pulumi.noChange);
        await run.step("speed: pulumi preview --refresh against kubectl diff --server-side", (c, io) => speed.previewRefreshStep(c, io, fairSpeed));
        await run.step(ENGINE_STEPS[2], pulumi.drift);
        await run.step(ENGINE_STEPS[3], pulumi.change);
        await run.step(ENGINE_STEPS[4], volumeGrowth.volumeGrowth);
        await run.step(ENGINE_STEPS[9], namespaceMove.namespaceMove);
        await run.step(ENGINE_STEPS[5], pulumi.policy);
        await run.step(ENGINE_STEPS[6], (c, io) => pulumi.hooks(c, io, engineState));
        // dev, and the add-ons' upgrades from their previous versions: the real charts only (steps/dev.ts).
        const devStep = "dev converges; add-ons upgraded from the previous versions";
        const noAddonCharts = addonChartsSkipReason(ctx);
        if (noAddonCharts) run.skip(devStep, noAddonCharts);
        else await run.step(devStep, dev.dev);
        await run.step(ENGINE_STEPS[7], pulumi.prod);
        await run.step(ENGINE_STEPS[8], pulumi.destroy);
    } finally {
        ingress.stop();
    }
    const up = ctx.times.get("pulumi-up")?.[0];
    const fair = ctx.times.get("kubectl-fair")?.[0];
    const ratio = up !== undefined && fair !== undefined ? [`speed: pulumi up ${up} s against the fair kubectl converge ${fair.toFixed(1)} s: ratio ${(up / fair).toFixed(1)} (goal <= 3)`] : [];
    const lines = [...pulumi.speedLines(ctx), ...fairSpeed, ...ratio];
    for (const l of lines) run.line(l);
    fs.writeFileSync(ctx.path("speed.txt"), lines.join("\n") + "\n");
    return engineState;
}

const REALNODE_STEPS = [
    "real node: containerd, images, kubelet, kube-proxy, kube-router; a pod runs",
    "real node: search engine and column store kept on kwok",
    "real node: pulumi up of ci, every pod Ready",
    "real node: declared flows connect (declared-flows.json)",
    "real node: undeclared flows refused (a sample per namespace)",
    "real node path: a chat through the bridge to the agent server",
    "real node path: a workflow run by the worker from the queue, its result in PostgreSQL",
    "real node path: the object store's bucket made by its Job",
    "real node fault: PostgreSQL's pod deleted mid-workflow",
    "real node fault: the bridge killed during a stream",
    "real node fault: a container OOM-killed",
    "real node path: each backup run as a Job, restored by its restore Job, data compared",
    "real node: pulumi destroy of ci, nothing left",
] as const;

/**
 * The real node (steps/realnode.ts): joined beside the kwok nodes when its toolchain and images are
 * in the cache, its steps skipped with the reason otherwise. Without `engine`: the engine set-up first (the
 * E2E_LAB=realnode path, where the engine path did not run); the engine's chart repository is closed at the end.
 */
async function realNodePath(ctx: Context, run: Steps, engine?: pulumi.EngineState): Promise<void> {
    const why = realnode.skipReason(ctx) ?? (ctx.missing(ctx.tools.engine).length ? `the engine is not built: ${ctx.missing(ctx.tools.engine).join(" ")}` : undefined);
    if (why) {
        for (const s of REALNODE_STEPS) run.skip(s, why);
        return;
    }
    const rest = (from: number, reason: string) => REALNODE_STEPS.slice(from).forEach((s) => run.skip(s, reason));
    if (!(await run.step(REALNODE_STEPS[0], realnode.start))) return rest(1, "the real node did not start (above)");
    if (!(await run.step(REALNODE_STEPS[1], realnode.keepOnKwok))) return rest(2, "the search engine and the column store could not be kept on kwok (above)");
    let state = engine;
    if (!state && !(await run.step("pulumi project, stacks ci and prod, secrets, add-on chart stand-ins", async (c, io) => void (state = await pulumi.setup(c, io))))) return rest(2, "the engine set-up did not run (above)");
    const ingress = pulumi.ingressStandIn(ctx);
    try {
        if (!(await run.step(REALNODE_STEPS[2], realnode.up))) return rest(3, "pulumi up of ci onto the real node failed (above)");
        await run.step(REALNODE_STEPS[3], realnodeFlows.declaredStep);
        await run.step(REALNODE_STEPS[4], realnodeFlows.refusedStep);
        await run.step(REALNODE_STEPS[5], realnodeChat.chatPath);
        await run.step(REALNODE_STEPS[6], realnodeWorkflow.workflowPath);
        await run.step(REALNODE_STEPS[7], realnodeBackups.bucketJob);
        await run.step(REALNODE_STEPS[8], realnodeWorkflow.dataStoreDeleted);
        await run.step(REALNODE_STEPS[9], realnodeChat.bridgeKilled);
        await run.step(REALNODE_STEPS[10], realnodeWorkflow.oomKilled);
        await run.step(REALNODE_STEPS[11], realnodeBackups.backupsRestored);
        await run.step(REALNODE_STEPS[12], realnode.destroy);
        for (const l of realnode.phaseLines(ctx)) run.line(l);
    } finally {
        ingress.stop();
        state?.charts.close();
        await realnode.stopUpstream();
    }
}

/** E2E_LAB=volume-growth (issue 29) or namespace-move (4c, issue 42): the control plane, pulumi up ci, and that step only. */
async function labStepPath(ctx: Context, run: Steps, step: 4 | 9): Promise<void> {
    const absent = ctx.missing(ctx.tools.engine);
    if (absent.length) throw new Error(`not in ${ctx.cache}: ${absent.join(" ")}; build with: npm run e2e:build`);
    let state: pulumi.EngineState | undefined;
    if (!(await run.step("pulumi project, stacks ci and prod, secrets, add-on chart stand-ins", async (c, io) => void (state = await pulumi.setup(c, io)))) || !state) return;
    const ingress = pulumi.ingressStandIn(ctx);
    try {
        if (await run.step(ENGINE_STEPS[0], pulumi.up)) await run.step(ENGINE_STEPS[step], step === 4 ? volumeGrowth.volumeGrowth : namespaceMove.namespaceMove);
    } finally {
        ingress.stop();
        state.charts.close();
    }
}

async function main(): Promise<number> {
    const ctx = new Context();
    const run = new Steps(ctx);
    console.log(`e2e of stack ${cluster.STACK}, work folder ${ctx.work}`);
    try {
        await controlPlane(ctx, run);
        // The engine levers A/B only (tools/e2e/steps/leverLab.ts).
        if (process.env.E2E_LAB === "levers") return (await leverLab.labPath(ctx, run), run.finish());
        if (process.env.E2E_LAB === "volume-growth") return (await labStepPath(ctx, run, 4), run.finish());
        if (process.env.E2E_LAB === "namespace-move") return (await labStepPath(ctx, run, 9), run.finish());
        if (process.env.E2E_LAB === "realnode") return (await realNodePath(ctx, run), run.finish());
        await kubectlPath(run);
        const engine = await enginePath(ctx, run);
        // After the teardown: the stack's own admission policies are gone, only the harness's policies judge the cases.
        await run.step("admission policies agree with CrossGuard on the real API server", admission.agree);
        // The real-node tier has its own command (npm run e2e:realnode): it adds image imports, a node,
        // a second up and the paths to a run CI already spends most of its 90 minutes on.
        if (!engine) for (const s of REALNODE_STEPS) run.skip(s, "the engine steps did not run (above)");
        else if (process.env.E2E_REALNODE === "1") await realNodePath(ctx, run, engine);
        else for (const s of REALNODE_STEPS) run.skip(s, "the real-node tier is its own command: npm run e2e:realnode (or E2E_REALNODE=1 npm run e2e)");
    } catch (err) {
        if (!(err instanceof RunEnded)) throw err;
    }
    return run.finish();
}

main().then((code) => process.exit(code), (err) => {
    console.error(`e2e: ${err instanceof Error ? err.stack ?? err.message : String(err)}`);
    process.exit(2);
});
