/**
 * The e2e's speed figures, measured so that both sides do the same work from the same start
 * (issue 29):
 *
 * - fairKubectlConverge: from the state `pulumi up` starts in (CRDs and the stand-in volumes there,
 *   none of the stack's objects, namespaces included), one `kubectl apply --server-side` of the
 *   whole render, then every wait the engine does: Deployments Available, StatefulSets with every
 *   replica available, Jobs complete, claims Bound, ResourceQuotas with their status, Ingresses
 *   with a load-balancer status. The waits run at once (the fastest a script can do it). The add-on
 *   releases are the e2e's empty stand-in charts: nothing for kubectl to install.
 * - previewRefreshVsDiff: `pulumi preview --refresh --expect-no-changes` (reads every object from
 *   the API server, as `kubectl diff --server-side` does) against `kubectl diff --server-side` of
 *   the render, medians of `repeat`.
 * - stepTimeLines: the engine's time per resource type (tools/e2e/stepClock.ts) of a report.
 * - compareLevers: `pulumi up` from empty and `pulumi destroy` for each engine lever (--parallel,
 *   PULUMI_SKIP_CHECKPOINTS), one after the other on the same cluster, fresh stand-in volumes each time.
 *
 * Each prints `speed:` lines; the driver records them (docs/e2e.md, "What each lever saved").
 */
import * as path from "node:path";
import type { EngineReport } from "../engine";
import type { Context, StepIO } from "../harness/context";
import { engine, kubectl, kubectlOk, median, type StepContext } from "./context";

export interface ConvergeTiming {
    seconds: number;
    /** Each wait's own time from the start of the waits. */
    waits: Record<string, number>;
}

const PART_OF = "app.kubernetes.io/part-of=ops-environment";

/** The waits of the engine, as kubectl commands over the whole cluster. */
export function engineWaits(timeout = "300s"): Record<string, string[]> {
    return {
        deployments: ["wait", "--for=condition=Available", "deployment", "--all", "-A", `--timeout=${timeout}`],
        jobs: ["wait", "--for=condition=Complete", "job", "-A", "-l", PART_OF, `--timeout=${timeout}`],
        claims: ["wait", "--for=jsonpath={.status.phase}=Bound", "persistentvolumeclaim", "--all", "-A", `--timeout=${timeout}`],
        quotas: ["wait", "--for=jsonpath={.status.hard}", "resourcequota", "--all", "-A", `--timeout=${timeout}`],
        ingresses: ["wait", "--for=jsonpath={.status.loadBalancer.ingress}", "ingress", "--all", "-A", `--timeout=${timeout}`],
    };
}

async function statefulSetsReady(ctx: StepContext, timeoutSeconds: number): Promise<void> {
    const end = Date.now() + timeoutSeconds * 1000;
    for (;;) {
        const r = await kubectlOk(ctx, ["get", "statefulset", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name} {.spec.replicas} {.status.availableReplicas}{\"\\n\"}{end}"]);
        const pending = r.stdout.split("\n").filter(Boolean).filter((l) => {
            const [, want, have] = l.split(" ");
            return want !== (have || "0");
        });
        if (pending.length === 0) return;
        if (Date.now() > end) throw new Error(`StatefulSets not ready after ${timeoutSeconds} s: ${pending.join(", ")}`);
        await new Promise((r) => setTimeout(r, 250));
    }
}

/** kubectl's converge from the same start as `pulumi up`; the cluster must hold none of the stack. */
export async function fairKubectlConverge(ctx: StepContext): Promise<ConvergeTiming> {
    const left = await kubectlOk(ctx, ["get", "namespace", "-l", PART_OF, "-o", "name"]);
    if (left.stdout.trim()) throw new Error(`the fair kubectl converge starts from an empty cluster; still there: ${left.stdout.trim().split("\n").join(", ")}`);
    const t0 = process.hrtime.bigint();
    const since = () => Number(process.hrtime.bigint() - t0) / 1e9;
    // Namespaces first: kubectl applies a List's items in order, and the namespaced ones need them.
    await kubectlOk(ctx, ["apply", "--server-side", "--field-manager", "ops-e2e", "-f", path.join(ctx.work, "namespaces.json")]);
    await kubectlOk(ctx, ["apply", "--server-side", "--field-manager", "ops-e2e", "-f", path.join(ctx.work, "objects.json")]);
    const applied = since();
    const waits: Record<string, number> = { apply: applied };
    await Promise.all([
        ...Object.entries(engineWaits()).map(async ([name, args]) => {
            await kubectlOk(ctx, args);
            waits[name] = since();
        }),
        statefulSetsReady(ctx, 300).then(() => (waits.statefulsets = since())),
    ]);
    const seconds = since();
    ctx.log(`speed: fair kubectl converge from empty: ${seconds.toFixed(1)} s (apply of namespaces and objects ${applied.toFixed(1)} s; waits done at ${Object.entries(waits).filter(([k]) => k !== "apply").map(([k, v]) => `${k} ${v.toFixed(1)} s`).join(", ")})`);
    return { seconds, waits };
}

/**
 * The stand-in volumes again, unbound: a PersistentVolume whose claim was deleted stays Released
 * with the old claim's uid and binds no new claim (<work>/volumes.json, cli.ts standins).
 */
export async function freshVolumes(ctx: StepContext): Promise<void> {
    await kubectlOk(ctx, ["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"]);
    await kubectlOk(ctx, ["apply", "--server-side", "--field-manager", "ops-e2e", "-f", path.join(ctx.work, "volumes.json")]);
}

/** Removes what fairKubectlConverge made (the render's objects), so that `pulumi up` starts from the same state. */
export async function removeKubectlConverge(ctx: StepContext): Promise<void> {
    await kubectlOk(ctx, ["delete", "-f", path.join(ctx.work, "all.json"), "--wait", "--timeout=300s", "--ignore-not-found"]);
    await freshVolumes(ctx);
}

export interface PreviewVsDiff {
    preview: number[];
    diff: number[];
    ratio: number;
}

/** Both read every object from the API server; medians of ctx.repeat. The stack must be converged. */
export async function previewRefreshVsDiff(ctx: StepContext): Promise<PreviewVsDiff> {
    const repeat = ctx.repeat ?? 3;
    const preview: number[] = [];
    const diff: number[] = [];
    for (let i = 1; i <= repeat; i++) {
        const report = await engine(ctx, "preview", `refresh-noop-${i}`, ["--refresh", "--expect-no-changes"]);
        if (!report.ok) throw new Error(`pulumi preview --refresh --expect-no-changes failed: ${report.error}`);
        preview.push(report.seconds);
        // The cluster is the engine's (its field managers): --force-conflicts makes the same reads and dry-run applies
        // without refusing on the other manager's fields (the differences it then shows, exit 1, are the managers').
        const d = await kubectl(ctx, ["diff", "--server-side", "--force-conflicts", "--field-manager", "ops-e2e", "-f", path.join(ctx.work, "all.json")]);
        if (d.code > 1) throw new Error(`kubectl diff --server-side failed (exit ${d.code}): ${d.stderr.trim()}`);
        diff.push(d.seconds);
    }
    const ratio = median(preview) / median(diff);
    ctx.log(`speed: no-change check reading the cluster (median of ${repeat}): pulumi preview --refresh ${median(preview).toFixed(1)} s, kubectl diff --server-side ${median(diff).toFixed(1)} s, ratio ${ratio.toFixed(2)} (goal <= 2)`);
    return { preview, diff, ratio };
}

/** `speed: step …` lines: the engine's time per resource type, longest total first. */
export function stepTimeLines(report: EngineReport, top = 12): string[] {
    const kind = (type: string) => type.replace(/^kubernetes:/, "");
    const name = (urn: string) => urn.split("::").pop() ?? urn;
    const lines = (report.stepTimes ?? []).slice(0, top).map((t) =>
        `speed: step ${kind(t.type)}: ${t.count} steps, ${t.total.toFixed(1)} s in all, longest ${t.max.toFixed(1)} s (${name(t.longest)})`);
    const engineSeconds = report.engineSeconds !== undefined ? `, engine ${report.engineSeconds.toFixed(1)} s from its first event to its summary` : "";
    return [`speed: pulumi ${report.operation} of ${report.stack}: ${report.seconds.toFixed(1)} s${engineSeconds}`, ...lines];
}

export interface Lever {
    name: string;
    args: string[];
}

/** The levers engine.ts has; the first is the CLI's default. */
export const LEVERS: Lever[] = [
    { name: "default", args: [] },
    { name: "--parallel 32", args: ["--parallel", "32"] },
    { name: "PULUMI_SKIP_CHECKPOINTS", args: ["--skip-checkpoints"] },
    { name: "--parallel 32 + PULUMI_SKIP_CHECKPOINTS", args: ["--parallel", "32", "--skip-checkpoints"] },
];

/** `pulumi up` from empty per lever (each followed by `pulumi destroy`); the cluster must hold none of the stack. */
export async function compareLevers(ctx: StepContext, levers: Lever[] = LEVERS): Promise<Record<string, { up: number; engine?: number }>> {
    const out: Record<string, { up: number; engine?: number }> = {};
    for (const [i, lever] of levers.entries()) {
        await freshVolumes(ctx);
        const up = await engine(ctx, "up", `lever-${i}-up`, lever.args);
        if (!up.ok) throw new Error(`pulumi up with ${lever.name} failed: ${up.error}`);
        out[lever.name] = { up: up.seconds, engine: up.engineSeconds };
        ctx.log(`speed: lever ${lever.name}: pulumi up from empty ${up.seconds.toFixed(1)} s${up.engineSeconds !== undefined ? ` (engine ${up.engineSeconds.toFixed(1)} s)` : ""}`);
        for (const l of stepTimeLines(up, 5).slice(1)) ctx.log(l);
        const down = await engine(ctx, "destroy", `lever-${i}-destroy`, lever.args);
        if (!down.ok) throw new Error(`pulumi destroy with ${lever.name} failed: ${down.error}`);
    }
    return out;
}

/** The driver's context (tools/e2e/harness/context.ts) as these modules' StepContext: `speed:` lines go to the step's RESULT lines and to `lines`. */
export function driverStepContext(ctx: Context, io: StepIO, lines: string[]): StepContext {
    return {
        kubeconfig: ctx.kubeconfig,
        kubectl: ctx.bin("kubectl", ctx.tools.k8s),
        work: ctx.work,
        projectDir: ctx.path("project"),
        stack: "ci",
        env: process.env,
        repeat: ctx.repeat,
        log: (line) => {
            io.result(line);
            if (line.startsWith("speed:")) lines.push(line);
        },
    };
}

/** The driver's step before `pulumi up`: kubectl's converge from the engine's start, then removed again (fresh volumes). */
export async function fairConvergeStep(ctx: Context, io: StepIO, lines: string[]): Promise<void> {
    const sc = driverStepContext(ctx, io, lines);
    const t = await fairKubectlConverge(sc);
    ctx.time("kubectl-fair", t.seconds);
    await removeKubectlConverge(sc);
}

/** The driver's step on the converged ci stack: `pulumi preview --refresh` against `kubectl diff --server-side`. */
export async function previewRefreshStep(ctx: Context, io: StepIO, lines: string[]): Promise<void> {
    await previewRefreshVsDiff(driverStepContext(ctx, io, lines));
}
