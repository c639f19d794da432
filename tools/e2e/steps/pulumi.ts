/**
 * The Pulumi engine on the same control plane, from empty again (issue 18): the real pulumi CLI
 * runs the real program through the Automation API (tools/e2e/engine.ts, an inline program: the
 * Node.js language host is not needed) with the kubernetes provider built from the proxy, the
 * stand-in random and tls providers and the policy-pack analyzer shim of tools/e2e/bin on PATH.
 * The project folder holds the repository's files through links (Pulumi.yaml is the real one) and
 * copies of the stack files, which the CLI writes (encryption salt, secrets): the repository is
 * never written.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { ChartRepo, releasesOf } from "../harness/chartRepo";
import * as addons from "./addons";
import { median, since, sleep, type Context, type StepIO } from "../harness/context";
import { leftOf, renderStack } from "./cluster";
import { compare, workloads } from "./objects";

/** Config keys of each add-on's chart repository (components/platform/addons.ts). */
const ADDON_REPO_KEYS = ["IngressNginx", "CertManager", "Reloader", "MetricsServer", "Vpa", "ArgoCd", "Monitoring"].map((a) => `ops:addons${a}Repo`);

export interface EngineState {
    charts: ChartRepo;
}

/**
 * The one thing of ingress-nginx the engine waits for: each Ingress's .status.loadBalancer (the
 * provider waits until it is set). Runs while the engine works, until stopped.
 */
export function ingressStandIn(ctx: Context): { stop: () => void } {
    let stopped = false;
    const quiet = { allowFail: true, quiet: true, logFile: ctx.path("logs", "ingress-standin.log") };
    void (async () => {
        while (!stopped) {
            const r = await ctx.kubectl(["get", "ingress", "-A", "-o", "json"], quiet).catch(() => undefined);
            const items: any[] = r?.code === 0 ? JSON.parse(r.stdout).items ?? [] : [];
            for (const i of items.filter((x) => !x.status?.loadBalancer?.ingress)) {
                await ctx.kubectl(["-n", i.metadata.namespace, "patch", "ingress", i.metadata.name, "--subresource=status", "--type=merge", "-p", '{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.1"}]}}}'], quiet).catch(() => undefined);
            }
            // The real ingress-nginx chart's controller Service (type LoadBalancer): helm waits for its
            // address, which a cloud's load-balancer controller sets (none here).
            const s = await ctx.kubectl(["get", "service", "-A", "-o", "json"], quiet).catch(() => undefined);
            const lbs: any[] = s?.code === 0 ? (JSON.parse(s.stdout).items ?? []).filter((x: any) => x.spec?.type === "LoadBalancer" && !x.status?.loadBalancer?.ingress) : [];
            for (const i of lbs) {
                await ctx.kubectl(["-n", i.metadata.namespace, "patch", "service", i.metadata.name, "--subresource=status", "--type=merge", "-p", '{"status":{"loadBalancer":{"ingress":[{"ip":"127.0.0.1"}]}}}'], quiet).catch(() => undefined);
            }
            await sleep(2000);
        }
    })();
    return { stop: () => (stopped = true) };
}

async function chartRepo(ctx: Context, io: StepIO): Promise<ChartRepo> {
    const repo = new ChartRepo(ctx);
    const real = addons.realCharts(ctx);
    if (real) io.result(`real add-on charts (OPS_CHART_SOURCES), packaged with ${real.helm}: ${(await addons.addCharts(ctx, real, repo, ctx.path("render/resources.json"))).join(" ")}`);
    else for (const r of releasesOf(ctx.path("render/resources.json"))) await repo.addStandIn(r.chart, r.version);
    await repo.addFolder(path.join(ctx.e2eDir, "charts/hooked"), "e2e");
    await repo.serve();
    io.result(`chart repository ${repo.url}: ${repo.charts.map((c) => c.file).join(" ")}`);
    return repo;
}

async function project(ctx: Context, io: StepIO, charts: ChartRepo): Promise<void> {
    const dir = ctx.path("project");
    fs.mkdirSync(dir, { recursive: true });
    fs.mkdirSync(ctx.path("hooks"), { recursive: true });
    // dev only with the real add-on charts (steps/dev.ts).
    const stacks = ["ci", "prod", ...(addons.realCharts(ctx) ? ["dev"] : [])];
    for (const f of [...fs.readdirSync(ctx.repo).filter((f) => !f.startsWith(".")), ".github"]) {
        if (stacks.some((st) => f === `Pulumi.${st}.yaml`)) fs.copyFileSync(path.join(ctx.repo, f), path.join(dir, f));
        else fs.symlinkSync(path.join(ctx.repo, f), path.join(dir, f));
    }
    const version = (await ctx.pulumi(["version"])).stdout.trim();
    fs.mkdirSync(ctx.path("state"), { recursive: true });
    await ctx.pulumi(["login", `file://${ctx.path("state")}`]);
    for (const s of stacks) {
        await ctx.pulumi(["stack", "init", s, "--secrets-provider", "passphrase"]);
        await ctx.run(ctx.tsx, [".github/scripts/ci-secrets.ts", "--stack", s], { cwd: dir, quiet: true });
        for (const k of ADDON_REPO_KEYS) await ctx.pulumi(["config", "set", "--stack", s, k, charts.url]);
    }
    // prod runs every image by its digest recorded in images.lock.json, which has no record here
    // (no registry access; docs/images.md), so the program stops before anything is created. The
    // e2e's copy of prod takes the offline render's setting instead: the all-zero placeholder
    // digest, which kwok never pulls and which is never accepted in the lock.
    await ctx.pulumi(["config", "set", "--stack", "prod", "render:imageDigests", "placeholder"]);
    const secure = fs.readFileSync(path.join(dir, "Pulumi.ci.yaml"), "utf8").split("\n").filter((l) => l.includes("secure: ")).length;
    if (secure === 0) throw new Error("no secure value in the stack file after config set --secret");
    const clean = await ctx.run("git", ["-C", ctx.repo, "diff", "--quiet", "--", ...stacks.map((st) => `Pulumi.${st}.yaml`)], { allowFail: true });
    if (clean.code !== 0) throw new Error("the repository's stack files were written");
    io.result(`pulumi ${version}, login file://, stacks ${stacks.join(", ")}, ${secure} secrets set with config set --secret (stored encrypted), add-on repositories -> ${charts.url}`);
}

/** Set-up: pre-bound volumes again, the chart repository, the project and its stacks. */
export async function setup(ctx: Context, io: StepIO): Promise<EngineState> {
    // The kubectl path's teardown deleted the volumes with their claims.
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("volumes.json")], { quiet: true });
    const charts = await chartRepo(ctx, io);
    await project(ctx, io, charts);
    // The webhook stand-in answers the real charts' webhooks and metrics.k8s.io.
    if (addons.realCharts(ctx)) addons.startWebhookStandIn(ctx);
    // Step 5's broken stack (bridgeImage from a repository no rule allows), previewed with the pack
    // now, on the empty cluster: none of the stack's own admission policies is there yet, so the
    // preview runs through to the pack's stack checks. Step 5 judges it.
    fs.copyFileSync(ctx.path("project/Pulumi.ci.yaml"), ctx.path("broken.yaml"));
    await ctx.pulumi(["config", "set", "--config-file", ctx.path("broken.yaml"), "--stack", "ci", "ops:bridgeImage", "quay.io/busybox/busybox:1.37.0"]);
    await ctx.engine("preview", "ci", "pack-broken-empty", ["--config-file", ctx.path("broken.yaml"), ...PACK]);
    return { charts };
}

const PACK = ["--policy-pack", "policies", "--policy-pack-config", "policies/config/ci.json"];

export function mustSucceed(r: { ok: boolean; error?: string; operation: string; stack: string }): void {
    if (!r.ok) throw new Error(`pulumi ${r.operation} of ${r.stack} failed: ${(r.error ?? "").slice(-1500)}`);
}

export const summary = (s: Record<string, number>) => `{${Object.entries(s).map(([k, v]) => `'${k}': ${v}`).join(", ")}}`;

/** Step 1: pulumi up converges; then the checks of the kubectl path: workloads ready, cluster == render. */
export async function up(ctx: Context, io: StepIO): Promise<void> {
    // The real charts install their own CRDs (the fair kubectl converge before this step needed the crds step's).
    if (addons.realCharts(ctx)) io.result(`the crds step's CRDs of the add-ons' groups deleted, the charts install their own: ${(await addons.removeStandInCrds(ctx)).join(" ")}`);
    const t0 = process.hrtime.bigint();
    const r = await ctx.engine("up", "ci", "up");
    mustSucceed(r);
    const took = since(t0);
    ctx.time("pulumi-up", took);
    await workloads(ctx, io);
    await compare(ctx, io, ctx.path("render/manifests.yaml"), true);
    io.result(`pulumi up: ${summary(r.summary)}, ${took} s with the engine's own waits`);
    await realChartLines(ctx, io, "ci", ctx.path("render/resources.json"));
}

/** With the real add-on charts: one line per chart, the Applications, what the webhook stand-in answered. */
export async function realChartLines(ctx: Context, io: StepIO, stack: string, resourcesJson: string): Promise<addons.ChartLine[] | undefined> {
    const real = addons.realCharts(ctx);
    if (!real) return undefined;
    const lines = await addons.chartLines(ctx, io, real, resourcesJson, stack);
    io.result(await addons.applicationsLine(ctx));
    io.result(addons.standInStatus(ctx));
    return lines;
}

/** Step 2: a second run changes nothing (timed E2E_REPEAT times: the speed figure). */
export async function noChange(ctx: Context, io: StepIO): Promise<void> {
    let first: Record<string, number> = {};
    const times: number[] = [];
    for (let i = 1; i <= ctx.repeat; i++) {
        const t0 = process.hrtime.bigint();
        const r = await ctx.engine("preview", "ci", `noop-${i}`, ["--expect-no-changes"]);
        mustSucceed(r);
        times.push(since(t0));
        if (i === 1) first = r.summary;
    }
    for (const t of times) ctx.time("pulumi-preview", t);
    io.result(`pulumi preview --expect-no-changes exits 0 (${summary(first)}); median ${median(times)} s of ${times.join(" ")}`);
}

/**
 * Step 3: an edit by another field manager is found by the drift workflow's command, then
 * repaired (every object carries pulumi.com/patchForce: components/lib/fieldOwnership.ts). At the
 * same time the autoscaled bridge is scaled through the scale subresource, as its autoscaler does:
 * not drift (the autoscaler owns spec.replicas), and the repair must leave it alone.
 */
export async function drift(ctx: Context, io: StepIO): Promise<void> {
    const replicas = async (ns: string, name: string) => (await ctx.kubectl(["-n", ns, "get", "deployment", name, "-o", "jsonpath={.spec.replicas}"])).stdout.trim();
    const bridgeBefore = await replicas("agent", "model-bridge");
    await ctx.kubectl(["-n", "booking", "patch", "deployment", "booking", "--type", "merge", "-p", '{"spec":{"replicas":3}}', "--field-manager", "e2e-drift"]);
    await ctx.kubectl(["-n", "agent", "patch", "deployment", "model-bridge", "--subresource=scale", "--type", "merge", "-p", '{"spec":{"replicas":1}}', "--field-manager", "e2e-autoscaler"]);
    const d = await ctx.engine("preview", "ci", "drift", ["--refresh", "--expect-no-changes"]);
    if (d.ok) throw new Error("preview --refresh --expect-no-changes passed despite the drift");
    const updates = d.steps.filter((s) => s.op === "update").map((s) => s.object ?? s.urn).sort().join("; ");
    if (updates !== "Deployment booking/booking") throw new Error(`the preview should update exactly Deployment booking/booking, it updates: ${updates}`);
    mustSucceed(await ctx.engine("up", "ci", "repair", ["--refresh"]));
    if ((await replicas("booking", "booking")) !== "1") throw new Error("pulumi up --refresh did not restore booking's replicas");
    if ((await replicas("agent", "model-bridge")) !== "1") throw new Error("pulumi up --refresh took the autoscaled bridge's replicas back from the autoscaler");
    mustSucceed(await ctx.engine("preview", "ci", "after-repair", ["--expect-no-changes"]));
    await ctx.kubectl(["-n", "agent", "patch", "deployment", "model-bridge", "--subresource=scale", "--type", "merge", "-p", JSON.stringify({ spec: { replicas: Number(bridgeBefore) } }), "--field-manager", "e2e-autoscaler"], { quiet: true });
    io.result(`drift (booking replicas 1 -> 3 by field manager e2e-drift) found by pulumi preview --refresh --expect-no-changes (non-zero, update of ${updates} only), repaired by pulumi up --refresh (replicas 1), then no change`);
    io.result(`the autoscaled bridge scaled ${bridgeBefore} -> 1 through the scale subresource meanwhile: not reported as drift, left at 1 by the repair`);
}

/**
 * Step 4: a change of configuration: in place where possible, replaced where not, as the preview
 * said; the PR diff names the same replacements. The replacement is the object store's
 * provisioning Job (a Job's template is immutable on the API server): a StatefulSet's
 * volumeClaimTemplates would be the other candidate, but provider 4.25.0 cannot preview that
 * replacement (docs/e2e.md).
 */
const CHANGE = { workflowWorkerReplicas: 2, bookingLimitsMemory: "320Mi", objectStoreBuckets: ["search-snapshots", "e2e-exports"] };
export async function change(ctx: Context, io: StepIO): Promise<void> {
    // The render with the change: what the PR diff sees, and volumes for the claims it adds.
    await ctx.tsxRun(path.join(ctx.e2eDir, "plan.ts"), ["prepare", "ci", JSON.stringify(CHANGE), ctx.path("volumes"), ctx.path("change")]);
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("change/volumes.json")], { quiet: true });
    await ctx.pulumi(["config", "set", "--stack", "ci", "ops:workflowWorkerReplicas", "2"]);
    await ctx.pulumi(["config", "set", "--stack", "ci", "ops:bookingLimitsMemory", "320Mi"]);
    await ctx.pulumi(["config", "set", "--stack", "ci", "--path", "ops:objectStoreBuckets[0]", "search-snapshots"]);
    await ctx.pulumi(["config", "set", "--stack", "ci", "--path", "ops:objectStoreBuckets[1]", "e2e-exports"]);
    mustSucceed(await ctx.engine("preview", "ci", "change-preview"));
    mustSucceed(await ctx.engine("up", "ci", "change-up"));
    await workloads(ctx, io);
    const r = await ctx.tsxRun(path.join(ctx.e2eDir, "plan.ts"), ["check", ctx.path("engine-change-preview.json"), ctx.path("engine-change-up.json"), ctx.path("change"), ctx.path("render/manifests.yaml")]);
    for (const l of r.stdout.split("\n").filter((x) => x.startsWith("RESULT: "))) io.result(l.slice("RESULT: ".length));
}

/**
 * Step 5: the policy pack through the CLI (analyzer shim), timed against the plain preview; a
 * stack that breaks a mandatory rule is refused with the policy named.
 */
export async function policy(ctx: Context, io: StepIO): Promise<void> {
    const times: number[] = [];
    let first: Awaited<ReturnType<Context["engine"]>> | undefined;
    for (let i = 1; i <= ctx.repeat; i++) {
        const t0 = process.hrtime.bigint();
        const r = await ctx.engine("preview", "ci", `pack-${i}`, PACK);
        mustSucceed(r);
        times.push(since(t0));
        first ??= r;
    }
    for (const t of times) ctx.time("pulumi-pack", t);
    const mandatory = (r: { policyViolations: Array<{ level: string; policy: string; message: string }> }) =>
        [...new Set(r.policyViolations.filter((v) => v.level === "mandatory").map((v) => `${v.policy}: ${v.message.slice(0, 160)}`.replace(/\s*\n\s*/g, " ")))].sort().join("; ");
    if (mandatory(first!)) throw new Error(`mandatory violations of the pack: ${mandatory(first!)}`);
    // The broken stack: on the empty cluster (engine set-up) the pack refuses it by name; on the
    // deployed cluster the stack's own admission policy of the same rule refuses the preview's
    // dry-run of the bridge first, so the preview stops before the pack's stack checks.
    const empty = JSON.parse(fs.readFileSync(ctx.path("engine-pack-broken-empty.json"), "utf8"));
    if (empty.ok) throw new Error("the pack's preview of the broken stack on the empty cluster passed");
    const named = mandatory(empty);
    if (!named.includes("allowed-repos") && !named.includes("quay.io")) throw new Error(`no mandatory violation of the pack names the image repository: ${named}`);
    const broken = await ctx.engine("preview", "ci", "pack-broken", ["--config-file", ctx.path("broken.yaml"), ...PACK]);
    if (broken.ok) throw new Error("the preview of the broken stack passed on the deployed cluster");
    const live = mandatory(broken);
    const log = fs.readFileSync(ctx.path("logs/engine-pack-broken.log"), "utf8");
    const admission = [...new Set(log.match(/ValidatingAdmissionPolicy '[^']+' with binding '[^']+' denied request: \[[^\]]+\]/g) ?? [])].sort().join(" ");
    if (!live.includes("allowed-repos") && !admission.includes("allowed-repos")) throw new Error("on the deployed cluster neither the pack nor the admission policies name the rule");
    io.result(`pulumi preview --policy-pack policies: passes, ${first!.policyViolations.length} advisory results; median ${median(times)} s of ${times.join(" ")}`);
    io.result(`bridgeImage from quay.io/busybox, on the empty cluster: exits non-zero, the pack's mandatory: ${named.slice(0, 240)}`);
    io.result(`the same on the deployed cluster: exits non-zero, ${live ? `the pack's mandatory: ${live.split("; ")[0]}; ` : ""}${admission ? `refused at the preview's dry-run by the stack's own admission policy: ${admission}` : ""}`);
}

/** Step 6: chart hooks through helm.v3.Release: install, upgrade on a values change, uninstall. */
export async function hooks(ctx: Context, io: StepIO, state: EngineState): Promise<void> {
    const run = async (op: "up" | "destroy", name: string, values: object) =>
        mustSucceed(await ctx.engine(op, "hooks", `hooks-${name}`, ["--program", "hooks", "--chart-repo", state.charts.url, "--values", JSON.stringify(values)], { dir: ctx.path("hooks") }));
    const secretRevision = async () => Buffer.from((await ctx.kubectl(["-n", "e2e-hooks", "get", "secret", "hooked-token", "-o", "jsonpath={.data.revision}"])).stdout.trim(), "base64").toString();
    await run("up", "install", { message: "first" });
    if ((await secretRevision()) !== "1") throw new Error("the pre-install hook Secret is not revision 1");
    await ctx.kubectl(["-n", "e2e-hooks", "wait", "--for=condition=Complete", "job/hooked-prepare-1", "--timeout=60s"]);
    await ctx.kubectl(["-n", "e2e-hooks", "wait", "--for=condition=Available", "deployment/hooked", "--timeout=60s"]);
    await run("up", "upgrade", { message: "second" });
    if ((await secretRevision()) !== "2") throw new Error("the pre-upgrade hook did not run again");
    await ctx.kubectl(["-n", "e2e-hooks", "wait", "--for=condition=Complete", "job/hooked-prepare-2", "--timeout=60s"]);
    const message = (await ctx.kubectl(["-n", "e2e-hooks", "get", "deployment", "hooked", "-o", "jsonpath={.spec.template.metadata.annotations.e2e/message}"])).stdout.trim();
    if (message !== "second") throw new Error("the upgrade did not change the Deployment");
    await run("destroy", "uninstall", {});
    if ((await ctx.kubectl(["-n", "e2e-hooks", "get", "deployment", "hooked"], { allowFail: true, quiet: true })).code === 0) throw new Error("the release's Deployment is still there after destroy");
    if ((await ctx.names(["-n", "e2e-hooks", "secret", "-l", "owner=helm"])).length) throw new Error("helm's release records are still there");
    // Hook objects are not part of a release: helm leaves them on uninstall; the namespace goes with them.
    await ctx.kubectl(["delete", "namespace", "e2e-hooks", "--wait", "--timeout=120s"], { quiet: true });
    io.result("helm.v3.Release of tools/e2e/charts/hooked: install (pre-install hook Secret + Job, Deployment Available), upgrade on a values change (hooks ran again: revision 2), uninstalled by pulumi destroy");
}

/** Step 7: prod converges on kwok nodes shaped like its node pool, after ci is destroyed (same namespaces). */
export async function prod(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    mustSucceed(await ctx.engine("destroy", "ci", "destroy-ci"));
    const left = await leftOf(ctx, ctx.path("render/manifests.yaml"));
    if (left.length) throw new Error(`pulumi destroy of ci left: ${left.join(" ")}`);
    const destroyed = since(t0);
    await ctx.kubectl(["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"], { quiet: true });
    const m = await renderStack(ctx, "prod", "render-prod");
    const r = ctx.path("render-prod");
    await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["pool", m, path.join(r, "node/pool.yaml"), path.join(r, "node/kubelet-config.yaml"), ctx.path("volumes-prod"), ctx.path("prod")]);
    await ctx.kubectl(["cordon", "-l", "type=kwok"], { quiet: true });
    await ctx.kubectl(["create", "-f", ctx.path("prod/node.json")]);
    await ctx.kubectl(["wait", "--for=condition=Ready", "node", "-l", "ops-e2e/pool=prod", "--timeout=60s"]);
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("prod/volumes.json")]);
    const upProd = await ctx.engine("up", "prod", "up-prod");
    mustSucceed(upProd);
    await workloads(ctx, io, m);
    await compare(ctx, io, m, true);
    const nodes = (await ctx.names(["node", "-l", "ops-e2e/pool=prod"])).length;
    io.result(`pulumi destroy ci: nothing of ci left (${destroyed} s); prod: ${nodes} nodes, pulumi up ${summary(upProd.summary)} in ${upProd.seconds.toFixed(1)} s`);
    if (await realChartLines(ctx, io, "prod", path.join(r, "resources.json"))) {
        mustSucceed(await ctx.engine("preview", "prod", "noop-prod", ["--expect-no-changes"]));
        io.result("pulumi preview --expect-no-changes of prod right after its up: exits 0");
    }
}

/**
 * Step 8: pulumi destroy leaves nothing of either stack. prod protects its PersistentVolumeClaims
 * (data outlives an accidental destroy), so the first destroy must refuse them and leave them on
 * the cluster; decommissioning is `pulumi state unprotect`, then destroy (docs/e2e.md).
 */
export async function destroy(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    const manifests = ctx.path("render-prod/manifests.yaml");
    const { parseManifests } = await import("../objects");
    const want = parseManifests(fs.readFileSync(manifests, "utf8")).filter((o) => o.kind === "PersistentVolumeClaim").map((o) => `${o.metadata?.namespace}/${o.metadata?.name}`).sort();
    const state = JSON.parse((await ctx.pulumi(["stack", "export", "--stack", "prod"], { quiet: true })).stdout);
    const protectedRes = (state.deployment.resources as any[]).filter((r) => r.protect).map((r) => {
        const m = r.outputs?.metadata ?? {};
        return `${String(r.type).split(":").pop()} ${m.namespace ?? ""}/${m.name ?? ""}`;
    }).sort();
    const expected = want.map((c) => `PersistentVolumeClaim ${c}`);
    if (JSON.stringify(protectedRes) !== JSON.stringify(expected)) throw new Error(`protected in prod's state: ${protectedRes.join(", ")}; expected exactly the claims of the render: ${want.join(", ")}`);
    const refused = await ctx.engine("destroy", "prod", "destroy-protected");
    if (refused.ok) throw new Error("pulumi destroy of prod passed although its claims are protected");
    if (!fs.readFileSync(ctx.path("logs/engine-destroy-protected.log"), "utf8").includes("cannot be deleted")) throw new Error("the failed destroy does not say the protected claims cannot be deleted");
    const live = (await ctx.kubectl(["get", "pvc", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace}/{.metadata.name}{\"\\n\"}{end}"], { quiet: true })).stdout.split("\n").filter(Boolean);
    const gone = want.filter((c) => !live.includes(c));
    if (gone.length) throw new Error(`protected claims gone after the refused destroy: ${gone.join(" ")}`);
    await ctx.pulumi(["state", "unprotect", "--all", "--yes", "--stack", "prod"]);
    mustSucceed(await ctx.engine("destroy", "prod", "destroy-prod"));
    const left = [...(await leftOf(ctx, manifests)), ...(await leftOf(ctx, ctx.path("render/manifests.yaml")))];
    if (left.length) throw new Error(`left behind: ${left.join(" ")}`);
    await ctx.kubectl(["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"], { quiet: true });
    io.result(`prod's ${want.length} protected claims refused by the first pulumi destroy and still on the cluster; after pulumi state unprotect --all, destroyed`);
    io.result(`pulumi destroy prod in ${since(t0)} s in all; nothing of either stack left (ci destroyed in step 7)`);
}

/** The speed section: the engine against kubectl server-side apply of the same render plus its waits. */
export function speedLines(ctx: Context): string[] {
    const t = (k: string) => ctx.times.get(k) ?? [];
    if (!t("pulumi-up").length) return [];
    return [
        `speed: converge from empty: pulumi up ${t("pulumi-up")[0]} s, kubectl apply --server-side + waits ${t("kubectl-apply")[0] ?? "?"} s`,
        `speed: no-change check (median of ${ctx.repeat}): pulumi preview ${median(t("pulumi-preview"))} s, kubectl diff --server-side ${median(t("kubectl-diff"))} s`,
        `speed: preview with the policy pack (median of ${ctx.repeat}): ${median(t("pulumi-pack"))} s, without ${median(t("pulumi-preview"))} s`,
    ];
}
