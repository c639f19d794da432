/**
 * The kubectl path over the render: server-side apply, workloads ready, the cluster holds exactly
 * the render, a second apply changes nothing, a drift is found and repaired, delete leaves nothing.
 * workloads() and compare() are also the engine steps' checks.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseManifests, groupOf } from "../objects";
import { since, type Context, type StepIO } from "../harness/context";

const PART_OF = "app.kubernetes.io/part-of=ops-environment";

/** "Kind.group" of every kind in a render, in order of first appearance, for kubectl get. */
export function kindsOf(manifests: string): string[] {
    const seen: string[] = [];
    for (const o of parseManifests(fs.readFileSync(manifests, "utf8"))) {
        if (!o.apiVersion || !o.kind) continue;
        const g = groupOf(o.apiVersion);
        const k = g ? `${o.kind}.${g}` : o.kind;
        if (!seen.includes(k)) seen.push(k);
    }
    return seen;
}

const countKind = (manifests: string, kind: string) => fs.readFileSync(manifests, "utf8").split("\n").filter((l) => l === `kind: ${kind}`).length;
const countObjects = (manifests: string) => fs.readFileSync(manifests, "utf8").split("\n").filter((l) => l.startsWith("kind: ")).length;

export async function apply(ctx: Context, io: StepIO): Promise<void> {
    const m = ctx.path("render/manifests.yaml");
    await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["lists", m, ctx.work]);
    // Namespaces first, and their default ServiceAccounts, which pods need.
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("namespaces.json")]);
    const namespaces = (await ctx.kubectl(["get", "-f", ctx.path("namespaces.json"), "-o", "jsonpath={.items[*].metadata.name}"])).stdout.split(" ").filter(Boolean);
    for (const ns of namespaces) {
        await ctx.waitFor(30, `ServiceAccount default in namespace ${ns}`, async () => (await ctx.kubectl(["-n", ns, "get", "serviceaccount", "default"], { allowFail: true, quiet: true })).code === 0);
    }
    ctx.kubectlApplyStart = process.hrtime.bigint();
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("objects.json")]);
    const n = countObjects(m);
    const got = (await ctx.kubectl(["get", "-f", ctx.path("all.json"), "-o", "name"], { quiet: true })).stdout.split("\n").filter(Boolean).length;
    if (got !== n) throw new Error(`${got} objects of the ${n} rendered are on the cluster`);
    io.result(`all ${n} objects of the render accepted by the API server (server-side apply)`);
}

async function statefulSetReady(ctx: Context, ns: string, name: string): Promise<boolean> {
    // spec.replicas is read on each try: an autoscaler may still be changing it.
    const r = await ctx.kubectl(["-n", ns, "get", "statefulset", name, "-o", "jsonpath={.spec.replicas} {.status.availableReplicas}"], { quiet: true, allowFail: true });
    const m = /^(\d+) (\d+)$/.exec(r.stdout.trim());
    return !!m && m[1] === m[2];
}

/** Every Deployment Available, every StatefulSet replica available, every Job complete, every CronJob admitted. */
export async function workloads(ctx: Context, io: StepIO, manifests = ctx.path("render/manifests.yaml")): Promise<void> {
    await ctx.kubectl(["wait", "--for=condition=Available", "deployment", "--all", "-A", "--timeout=180s"]);
    const sts = (await ctx.kubectl(["get", "statefulset", "-A", "-o", "jsonpath={range .items[*]}{.metadata.namespace} {.metadata.name}{\"\\n\"}{end}"], { quiet: true })).stdout.split("\n").filter(Boolean);
    for (const line of sts) {
        const [ns, name] = line.split(" ");
        await ctx.waitFor(180, `every replica of StatefulSet ${ns}/${name} available`, () => statefulSetReady(ctx, ns, name));
    }
    // The render's own Jobs, by name: a Job a CronJob of the stack starts meanwhile (a backup at its
    // hour of the wall clock) is not part of the render and may wait on what only production has.
    const jobs = parseManifests(fs.readFileSync(manifests, "utf8")).filter((o) => o.kind === "Job");
    for (const j of jobs) await ctx.kubectl(["-n", j.metadata!.namespace!, "wait", "--for=condition=Complete", `job/${j.metadata!.name}`, "--timeout=180s"]);
    const cron = (await ctx.names(["cronjob", "-A"])).length;
    const want = countKind(manifests, "CronJob");
    if (cron !== want) throw new Error(`${cron} CronJobs on the cluster, ${want} rendered`);
    if (ctx.kubectlApplyStart !== undefined && !ctx.times.has("kubectl-apply")) ctx.time("kubectl-apply", since(ctx.kubectlApplyStart));
    const deployments = (await ctx.names(["deploy", "-A"])).length;
    io.result(`${deployments} Deployments Available, ${sts.length} StatefulSets with every replica available, ${jobs.length} Jobs complete, ${cron} CronJobs admitted`);
    const pods = await ctx.kubectlJson<{ items: Array<{ status?: { phase?: string } }> }>(["get", "pods", "-A"]);
    const phases = new Map<string, number>();
    for (const p of pods.items) phases.set(p.status?.phase ?? "Unknown", (phases.get(p.status?.phase ?? "Unknown") ?? 0) + 1);
    io.result(`${[...phases].sort().map(([k, v]) => `${v} ${k}`).join(" ")} pods (kwok moves scheduled pods to Running and Ready)`);
}

/**
 * The cluster holds exactly the render: same objects, every rendered field with its value.
 * generatedSecrets: the engine made the Secrets' values, the render has placeholders: keys only.
 */
export async function compare(ctx: Context, io: StepIO, manifests = ctx.path("render/manifests.yaml"), generatedSecrets = false): Promise<void> {
    const live = await ctx.kubectl(["get", kindsOf(manifests).join(","), "-A", "-o", "json"], { quiet: true });
    fs.writeFileSync(ctx.path("live.json"), live.stdout);
    const r = await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["compare", manifests, ctx.path("live.json"), ...(generatedSecrets ? ["--generated-secrets"] : [])], { allowFail: true });
    const last = r.stdout.trim().split("\n").pop() ?? "";
    if (r.code !== 0) throw new Error(`the cluster differs from the render: ${last}`);
    io.result(last);
}

/**
 * A second server-side apply changes no field. Objects the server would rewrite with only a new
 * generation are listed (empty lists or maps in the render: stored absent, so each apply sees
 * empty-vs-absent as an update).
 */
export async function noChange(ctx: Context, io: StepIO): Promise<void> {
    let diff = "";
    let code = 0;
    for (let i = 0; i < ctx.repeat; i++) {
        const t0 = process.hrtime.bigint();
        const r = await ctx.kubectl(["diff", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("all.json")], { allowFail: true, quiet: true });
        ctx.time("kubectl-diff", since(t0));
        diff = r.stdout + r.stderr;
        code = r.code;
    }
    if (code > 1) throw new Error(`kubectl diff failed (exit ${code}): ${diff.slice(-2000)}`);
    const lines = diff.split("\n");
    const changed = lines.filter((l) => /^[-+] /.test(l) && !/^[-+] +generation: \d+$/.test(l));
    const rewritten = lines.filter((l) => /^\+ +generation: \d+$/.test(l)).length;
    if (changed.length) {
        io.log(diff);
        throw new Error("a second apply would change fields (above)");
    }
    if (rewritten) {
        io.result(`no field changes; ${rewritten} objects would get a new generation (empty lists/maps in the render):`);
        io.result(`  ${lines.filter((l) => l.startsWith("diff -u")).map((l) => l.replace(/.*\/([^/]+)$/, "$1").replace(/^([a-z0-9.-]+\.)?v\d+[a-z0-9]*\./, "")).join(" ")}`);
    } else {
        io.result("kubectl diff --server-side of the render: no change");
    }
}

/** An object edited on the cluster is found by the diff, which then fails; a re-apply repairs it. */
export async function drift(ctx: Context, io: StepIO): Promise<void> {
    await ctx.kubectl(["-n", "booking", "patch", "deployment", "booking", "--type", "merge", "-p", '{"spec":{"replicas":3}}', "--field-manager", "e2e-drift"]);
    const r = await ctx.kubectl(["diff", "--server-side", "--force-conflicts", "--field-manager", "ops-e2e", "-f", ctx.path("all.json")], { allowFail: true, quiet: true });
    const text = r.stdout + r.stderr;
    if (r.code !== 1) throw new Error(`kubectl diff exited ${r.code} after the edit, expected 1 (differences found): ${text.slice(-1500)}`);
    if (!/^-  replicas: 3$/m.test(text)) {
        io.log(text);
        throw new Error("the diff does not show the edited field");
    }
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "--force-conflicts", "-f", ctx.path("all.json")], { quiet: true });
    const replicas = (await ctx.kubectl(["-n", "booking", "get", "deployment", "booking", "-o", "jsonpath={.spec.replicas}"])).stdout.trim();
    if (replicas !== "1") throw new Error(`re-apply did not restore replicas (${replicas})`);
    io.result("drift (booking replicas 1 -> 3 by another field manager) found by kubectl diff --server-side (exit 1), re-applied: replicas 1");
}

export async function teardown(ctx: Context, io: StepIO): Promise<void> {
    await ctx.kubectl(["delete", "-f", ctx.path("all.json"), "--wait", "--timeout=180s"], { quiet: true });
    const left = await ctx.names([kindsOf(ctx.path("render/manifests.yaml")).join(","), "-A", "-l", PART_OF]);
    if (left.length) throw new Error(`left behind: ${left.join(" ")}`);
    await ctx.kubectl(["delete", "pv", "-l", "ops-e2e/stand-in=storage", "--wait", "--timeout=60s"], { quiet: true });
    io.result("every object of the render deleted (namespaces included), none of the stack left");
}
