/**
 * The dev stack through the engine (issue 28; with the real add-on charts, OPS_CHART_SOURCES): the
 * stack the README starts with, on a kwok node shaped like its pool (node/pool.yaml of the dev
 * render). Its add-ons are first installed at their previous versions (tools/e2e/steps/addons.ts
 * PREVIOUS), then upgraded to the pins by a version change in the stack's config: every
 * helm.v3.Release upgraded through the engine, no immutable-field error. Then the checks of the ci
 * stack (workloads, cluster == render, no change), and `pulumi destroy` leaves nothing.
 */
import * as path from "node:path";
import { releasesOf } from "../harness/chartRepo";
import { since, type Context, type StepIO } from "../harness/context";
import * as addons from "./addons";
import { leftOf, renderStack } from "./cluster";
import { compare, workloads } from "./objects";
import { mustSucceed, realChartLines, summary } from "./pulumi";

export async function dev(ctx: Context, io: StepIO): Promise<void> {
    const real = addons.realCharts(ctx);
    if (!real) throw new Error("the dev step needs the real add-on charts (OPS_CHART_SOURCES)");
    const t0 = process.hrtime.bigint();
    // ci and dev share namespaces: ci goes first (step 7 destroys it again, finding nothing).
    mustSucceed(await ctx.engine("destroy", "ci", "destroy-ci-for-dev"));
    const leftCi = await leftOf(ctx, ctx.path("render/manifests.yaml"));
    if (leftCi.length) throw new Error(`pulumi destroy of ci left: ${leftCi.join(" ")}`);
    await ctx.kubectl(["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"], { quiet: true });
    const m = await renderStack(ctx, "dev", "render-dev");
    const r = ctx.path("render-dev");
    const resources = path.join(r, "resources.json");
    await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["pool", m, path.join(r, "node/pool.yaml"), path.join(r, "node/kubelet-config.yaml"), ctx.path("volumes-dev"), ctx.path("dev"), "dev"]);
    await ctx.kubectl(["cordon", "-l", "type=kwok"], { quiet: true });
    await ctx.kubectl(["create", "-f", ctx.path("dev/node.json")]);
    await ctx.kubectl(["wait", "--for=condition=Ready", "node", "-l", "ops-e2e/pool=dev", "--timeout=60s"]);
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("dev/volumes.json")]);

    const previous = await addons.setVersions(ctx, "dev", resources, "previous");
    const first = await ctx.engine("up", "dev", "up-dev-previous");
    mustSucceed(first);
    io.result(`pulumi up dev with the add-ons' previous versions (${previous}): ${summary(first.summary)} in ${first.seconds.toFixed(1)} s`);
    await addons.chartLines(ctx, io, real, resources, "dev, previous");

    await addons.setVersions(ctx, "dev", resources, "pinned");
    const upgrade = await ctx.engine("up", "dev", "up-dev-upgrade");
    mustSucceed(upgrade);
    const releases = upgrade.steps.filter((s) => s.type === "kubernetes:helm.sh/v3:Release" && s.op === "update").length;
    const want = releasesOf(resources).length;
    if (releases !== want) throw new Error(`the version change updated ${releases} helm releases in place, expected ${want}: ${upgrade.steps.filter((s) => s.type.includes("Release")).map((s) => `${s.op} ${s.urn.split("::").pop()}`).join(", ")}`);
    io.result(`upgrade to the pins through the engine: ${summary(upgrade.summary)} in ${upgrade.seconds.toFixed(1)} s, ${releases} helm.v3.Release updated in place, no immutable-field error`);
    await workloads(ctx, io, m);
    await compare(ctx, io, m, true);
    await realChartLines(ctx, io, "dev", resources);
    mustSucceed(await ctx.engine("preview", "dev", "noop-dev", ["--expect-no-changes"]));
    io.result("pulumi preview --expect-no-changes of dev right after the upgrade: exits 0");

    const d = await ctx.engine("destroy", "dev", "destroy-dev");
    mustSucceed(d);
    const left = await leftOf(ctx, m);
    if (left.length) throw new Error(`pulumi destroy of dev left: ${left.join(" ")}`);
    const helmLeft = (await ctx.kubectl(["get", "secret", "-A", "-l", "owner=helm", "-o", "name"], { quiet: true })).stdout.trim();
    if (helmLeft) throw new Error(`helm release records left after destroy: ${helmLeft.split("\n").join(" ")}`);
    await ctx.kubectl(["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"], { quiet: true });
    await ctx.kubectl(["delete", "node", "-l", "ops-e2e/pool=dev", "--wait", "--timeout=60s"], { quiet: true });
    await ctx.kubectl(["uncordon", "-l", "type=kwok"], { quiet: true });
    io.result(`pulumi destroy dev: ${summary(d.summary)} in ${d.seconds.toFixed(1)} s, nothing of dev left, no helm release left (namespaces deleted); dev in all ${since(t0)} s`);
}
