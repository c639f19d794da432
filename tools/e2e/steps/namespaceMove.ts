/**
 * Issue 42 class 4: a refused change is refused again on the next run, and the claims survive,
 * through the engine on the deployed ci stack, with the Automation API's `up`: no preview, so the
 * engine applies each resource as the program registers it (as `pulumi up --skip-preview` does).
 *
 * 1. `ops:dataStoresNamespace` moved away from the stores' namespace, `up` twice in a row: both
 *    refused by the program before it registers anything (components/lib/claimGuard.ts
 *    refuseNamespaceLoss), naming the namespace, the StatefulSets and their claims. After each: the
 *    new namespace does not exist, the old one, its StatefulSets, claims and pods have the same uids,
 *    a file written into PostgreSQL's volume is still there, and the stack's outputs are the last
 *    deploy's (the engine keeps them when a deployment fails).
 * 2. A shrink of `ops:postgresVolumeSize`, `up` twice in a row: refused at the end of the run (the
 *    stack output fails), the outputs again kept, the claims unchanged.
 * 3. Outputs that say nothing: the stack's state imported again without `volumeClaimSizes` and
 *    `volumeClaimOrdinals` (as a last deploy by a program before the guard has it, or outputs lost
 *    another way), the namespace move `up` twice: both refused all the same, from the deployed
 *    StatefulSets in the stack's state (claimGuard.ts readDeployedSizes), nothing changed; the
 *    exported state is imported back as it was.
 * Then the settings go back and `pulumi preview --expect-no-changes` shows nothing changed.
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";
import { parseManifests } from "../objects";

const NS_KEY = "ops:dataStoresNamespace";
const SIZE_KEY = "ops:postgresVolumeSize";
const SIZES_OUTPUT = "volumeClaimSizes";
const DATA_FILE = "e2e-namespace-move.txt";

/** The uids of what the stores' namespace holds: the namespace, its StatefulSets, their claims (with the size they request) and their pods. */
async function holdings(ctx: Context, ns: string): Promise<Record<string, string>> {
    const out: Record<string, string> = { [`namespace/${ns}`]: (await ctx.kubectlJson(["get", "namespace", ns])).metadata.uid };
    for (const kind of ["statefulsets", "persistentvolumeclaims", "pods"]) {
        for (const o of (await ctx.kubectlJson(["-n", ns, "get", kind])).items) {
            // A backup Job's pod may come and go meanwhile: only the StatefulSets' own pods count.
            if (kind === "pods" && !(o.metadata.ownerReferences ?? []).some((r: { kind: string }) => r.kind === "StatefulSet")) continue;
            out[`${kind}/${o.metadata.name}`] = `${o.metadata.uid} ${o.spec?.resources?.requests?.storage ?? ""}`.trim();
        }
    }
    return out;
}

const config = async (ctx: Context, key: string): Promise<string> => (await ctx.pulumi(["config", "get", "--stack", "ci", key])).stdout.trim();
const outputs = async (ctx: Context): Promise<Record<string, unknown>> => JSON.parse((await ctx.pulumi(["stack", "output", "--json", "--stack", "ci"], { quiet: true })).stdout);

/** Step: a namespace move and a shrink, each refused by two `up`s in a row; nothing changes, the outputs stay. */
export async function namespaceMove(ctx: Context, io: StepIO): Promise<void> {
    const ns = await config(ctx, NS_KEY);
    const sets = parseManifests(fs.readFileSync(ctx.path("render/manifests.yaml"), "utf8")).filter((o) => o.kind === "StatefulSet" && o.metadata?.namespace === ns).map((o) => o.metadata!.name!);
    if (!sets.includes("postgres")) throw new Error(`the render has no StatefulSet ${ns}/postgres`);
    const moved = `${ns}-moved`;

    // Data in PostgreSQL's volume (its stand-in PersistentVolume's hostPath folder).
    const claim = await ctx.kubectlJson(["-n", ns, "get", "pvc", "data-postgres-0"]);
    const dir = (await ctx.kubectlJson(["get", "pv", claim.spec.volumeName])).spec.hostPath?.path as string;
    fs.mkdirSync(dir, { recursive: true });
    const token = crypto.randomBytes(8).toString("hex");
    fs.writeFileSync(path.join(dir, DATA_FILE), token);

    const before = await holdings(ctx, ns);
    const lastOutputs = await outputs(ctx);
    const sizes = lastOutputs[SIZES_OUTPUT] as Record<string, string> | undefined;
    if (!sizes?.[`${ns}/postgres`]) throw new Error(`the stack output ${SIZES_OUTPUT} has no ${ns}/postgres: ${JSON.stringify(sizes)}`);

    /** One refused `up`: non-zero, the reason in its output, nothing of the cluster or the outputs changed. */
    const refusedUp = async (name: string, reason: RegExp, sizesKept: { value: unknown } = { value: lastOutputs[SIZES_OUTPUT] }): Promise<string> => {
        const r = await ctx.engine("up", "ci", name);
        const log = fs.readFileSync(ctx.path("logs", `engine-${name}.log`), "utf8");
        const said = (`${r.error ?? ""}\n${log}`.match(reason) ?? [])[0];
        if (r.ok || r.exitCode === 0) throw new Error(`${name}: pulumi up passed`);
        if (!said) throw new Error(`${name}: pulumi up failed without the reason ${reason}: ${(r.error ?? "").slice(-1200)}`);
        const problems: string[] = [];
        const created = r.steps.filter((s) => s.op !== "read");
        if (created.length) problems.push(`it took steps: ${created.map((s) => `${s.op} ${s.object ?? s.urn}`).join("; ")}`);
        if ((await ctx.names(["namespace", moved])).length) problems.push(`namespace ${moved} exists`);
        const now = await holdings(ctx, ns);
        if (JSON.stringify(now) !== JSON.stringify(before)) problems.push(`what ${ns} holds changed: ${JSON.stringify(before)} -> ${JSON.stringify(now)}`);
        if (!(fs.existsSync(path.join(dir, DATA_FILE)) && fs.readFileSync(path.join(dir, DATA_FILE), "utf8") === token)) problems.push(`the file ${DATA_FILE} in ${dir} is gone or changed`);
        const kept = await outputs(ctx);
        if (JSON.stringify(kept[SIZES_OUTPUT]) !== JSON.stringify(sizesKept.value)) problems.push(`the stack output ${SIZES_OUTPUT} changed: ${JSON.stringify(kept[SIZES_OUTPUT])}`);
        if (problems.length) throw new Error(`${name}: ${problems.join("; ")}`);
        return `${name}: exit ${r.exitCode} in ${r.seconds.toFixed(1)} s, no step, "${said.slice(0, 400)}"`;
    };

    await ctx.pulumi(["config", "set", "--stack", "ci", NS_KEY, moved]);
    try {
        for (const attempt of [1, 2]) io.result(await refusedUp(`move-up-${attempt}`, new RegExp(`refused before anything changes: namespace ${ns}, which the stack no longer declares, holds StatefulSets? [^"\\n]*${ns}/postgres[^"\\n]*`)));
    } finally {
        await ctx.pulumi(["config", "set", "--stack", "ci", NS_KEY, ns]);
    }

    // The refusal at the end of a run (the stack output fails): the engine keeps the last outputs too.
    const size = await config(ctx, SIZE_KEY);
    const m = /^(\d+)Gi$/.exec(size);
    if (!m || Number(m[1]) < 2) throw new Error(`${SIZE_KEY} is ${size}, expected <n>Gi with n >= 2`);
    const smaller = `${Math.floor(Number(m[1]) / 2)}Gi`;
    await ctx.pulumi(["config", "set", "--stack", "ci", SIZE_KEY, smaller]);
    try {
        for (const attempt of [1, 2]) io.result(await refusedUp(`shrink-up-${attempt}`, new RegExp(`refused before anything changes: ${SIZE_KEY} ${size} -> ${smaller} would shrink [^"\\n]*`)));
    } finally {
        await ctx.pulumi(["config", "set", "--stack", "ci", SIZE_KEY, size]);
    }

    // The outputs without the guard's record: the state's StatefulSets are judged instead.
    const exported = ctx.path("ci-state.json");
    const stripped = ctx.path("ci-state-without-sizes.json");
    await ctx.pulumi(["stack", "export", "--stack", "ci", "--file", exported], { quiet: true });
    const state = JSON.parse(fs.readFileSync(exported, "utf8"));
    const root = (state.deployment?.resources ?? []).find((r: { type: string }) => r.type === "pulumi:pulumi:Stack");
    if (!root?.outputs?.[SIZES_OUTPUT]) throw new Error(`the exported state's stack resource has no output ${SIZES_OUTPUT}`);
    delete root.outputs[SIZES_OUTPUT];
    delete root.outputs.volumeClaimOrdinals;
    fs.writeFileSync(stripped, JSON.stringify(state));
    await ctx.pulumi(["stack", "import", "--stack", "ci", "--file", stripped], { quiet: true });
    await ctx.pulumi(["config", "set", "--stack", "ci", NS_KEY, moved]);
    try {
        for (const attempt of [1, 2]) io.result(await refusedUp(`stateless-move-up-${attempt}`, new RegExp(`refused before anything changes: namespace ${ns}, which the stack no longer declares, holds StatefulSets? [^"\\n]*${ns}/postgres[^"\\n]*`), { value: undefined }));
    } finally {
        await ctx.pulumi(["config", "set", "--stack", "ci", NS_KEY, ns]);
        await ctx.pulumi(["stack", "import", "--stack", "ci", "--file", exported], { quiet: true });
    }

    const steady = await ctx.engine("preview", "ci", "move-steady", ["--expect-no-changes"]);
    if (!steady.ok) throw new Error(`after the refused runs, pulumi preview --expect-no-changes reports changes: ${steady.steps.map((s) => `${s.op} ${s.object ?? s.urn}`).join("; ")}`);
    io.result(`after six refused ups (two without the outputs' record): ${Object.keys(before).length} objects of ${ns} with the same uids, ${DATA_FILE} still in data-postgres-0's volume, ${SIZES_OUTPUT} as deployed, pulumi preview --expect-no-changes exits 0`);
}
