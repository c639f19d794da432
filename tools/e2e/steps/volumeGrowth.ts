/**
 * Issue 29: a data volume that grows, through the engine on the deployed ci stack
 * (components/lib/claimGrowth.ts). PostgreSQL's claim gets a file in its (stand-in hostPath)
 * volume, then a bigger `ops:postgresVolumeSize`: the preview succeeds and names the StatefulSet's
 * replacement and the claim's patch (and the program's reads of the claim and its StorageClass);
 * `pulumi up` keeps the claim (same name and uid, the new size in its spec), the file, and the pods
 * (same uids, now owned by the new StatefulSet). A shrink, and a growth on a class without volume
 * expansion, are refused by the program itself in `pulumi preview` (components/lib/claimGuard.ts),
 * naming the key, both sizes and the class: the StatefulSet (same uid), claims and pods unchanged.
 * On this cluster "expanded" is the claim's spec: the hostPath volume cannot grow, so
 * status.capacity stays (kube-controller-manager's expand controller finds no expandable plugin;
 * docs/e2e.md).
 */
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";
import { parseManifests, STAND_IN_CLASS } from "../objects";

const KEY = "ops:postgresVolumeSize";
const SET = "postgres";
const DATA_FILE = "e2e-volume-growth.txt";

interface Live {
    setUid: string;
    claims: { name: string; uid: string; size: string; capacity: string; volume: string }[];
    pods: { name: string; uid: string; owner: string }[];
}

async function live(ctx: Context, ns: string, selector: string, claimNames: string[]): Promise<Live> {
    const set = await ctx.kubectlJson(["-n", ns, "get", "statefulset", SET]);
    const claims = [];
    for (const name of claimNames) {
        const c = await ctx.kubectlJson(["-n", ns, "get", "pvc", name]);
        claims.push({ name, uid: c.metadata.uid, size: c.spec.resources.requests.storage, capacity: c.status?.capacity?.storage ?? "", volume: c.spec.volumeName ?? "" });
    }
    const pods = (await ctx.kubectlJson(["-n", ns, "get", "pods", "-l", selector])).items.map((p: any) => ({
        name: p.metadata.name,
        uid: p.metadata.uid,
        owner: (p.metadata.ownerReferences ?? []).find((o: any) => o.controller)?.uid ?? "",
    }));
    return { setUid: set.metadata.uid, claims, pods };
}

const podUids = (l: Live) => l.pods.map((p) => `${p.name}=${p.uid}`).sort().join(" ");

const changed = (r: { steps: { op: string; type: string; object?: string; keys?: string[] }[] }) =>
    r.steps.map((s) => `${s.op} ${s.object ?? s.type}${s.keys?.length ? ` [${s.keys.join(",")}]` : ""}`);

/** Step: grow PostgreSQL's volume; a shrink and a class without expansion refused. */
export async function volumeGrowth(ctx: Context, io: StepIO): Promise<void> {
    const rendered = parseManifests(fs.readFileSync(ctx.path("render/manifests.yaml"), "utf8")).find((o) => o.kind === "StatefulSet" && o.metadata?.name === SET);
    if (!rendered) throw new Error(`the render has no StatefulSet ${SET}`);
    const ns = rendered.metadata!.namespace!;
    const selector = Object.entries(rendered.spec.selector.matchLabels as Record<string, string>).map(([k, v]) => `${k}=${v}`).join(",");
    const claimNames = (rendered.spec.volumeClaimTemplates as any[]).flatMap((t) => Array.from({ length: rendered.spec.replicas ?? 1 }, (_, i) => `${t.metadata.name}-${SET}-${i}`));
    const before = await live(ctx, ns, selector, claimNames);
    if (before.pods.length === 0) throw new Error(`no pod of ${ns}/${SET}`);
    const old = (await ctx.pulumi(["config", "get", "--stack", "ci", KEY])).stdout.trim();
    const m = /^(\d+)Gi$/.exec(old);
    if (!m) throw new Error(`${KEY} is ${old}, expected <n>Gi`);
    const grown = `${Number(m[1]) * 2}Gi`;

    // Data in the first claim's volume (the stand-in PersistentVolume's hostPath folder).
    const pv = await ctx.kubectlJson(["get", "pv", before.claims[0].volume]);
    const dir = pv.spec.hostPath?.path as string;
    fs.mkdirSync(dir, { recursive: true });
    const token = crypto.randomBytes(8).toString("hex");
    fs.writeFileSync(path.join(dir, DATA_FILE), token);

    await ctx.pulumi(["config", "set", "--stack", "ci", KEY, grown]);
    const preview = await ctx.engine("preview", "ci", "grow-preview");
    if (!preview.ok) throw new Error(`the preview of ${KEY} ${old} -> ${grown} failed: ${(preview.error ?? "").slice(-1500)}`);
    const named = changed(preview);
    const replaced = preview.steps.find((s) => s.type === "kubernetes:apps/v1:StatefulSet" && s.object === `StatefulSet ${ns}/${SET}` && s.op.includes("replace"));
    const patched = claimNames.map((c) => preview.steps.find((s) => s.type === "kubernetes:core/v1:PersistentVolumeClaimPatch" && s.object === `PersistentVolumeClaim ${ns}/${c}` && s.op === "update"));
    if (!replaced || patched.some((p) => !p)) throw new Error(`the preview does not name the StatefulSet's replacement and each claim's patch: ${named.join("; ")}`);
    // The program reads each claim it expands and the claim's StorageClass (claimGuard.ts): reads, no change.
    const others = preview.steps.filter((s) => s.object && s.op !== "read" && s.object !== `StatefulSet ${ns}/${SET}` && !claimNames.some((c) => s.object === `PersistentVolumeClaim ${ns}/${c}`));
    if (others.length) throw new Error(`the preview changes other objects too: ${changed({ steps: others }).join("; ")}`);
    io.result(`${KEY} ${old} -> ${grown}: pulumi preview succeeds in ${preview.seconds.toFixed(1)} s and names: ${[...new Set(named)].join("; ")}`);

    const up = await ctx.engine("up", "ci", "grow-up");
    if (!up.ok) throw new Error(`pulumi up of the grown volume failed: ${(up.error ?? "").slice(-1500)}`);
    const after = await live(ctx, ns, selector, claimNames);
    const problems: string[] = [];
    for (const c of after.claims) {
        const b = before.claims.find((x) => x.name === c.name)!;
        if (c.uid !== b.uid) problems.push(`claim ${c.name} was re-created (uid ${b.uid} -> ${c.uid})`);
        if (c.size !== grown) problems.push(`claim ${c.name} requests ${c.size}, expected ${grown}`);
        if (c.volume !== b.volume) problems.push(`claim ${c.name} is bound to ${c.volume}, was ${b.volume}`);
    }
    if (podUids(after) !== podUids(before)) problems.push(`the pods changed: ${podUids(before)} -> ${podUids(after)}`);
    if (after.setUid === before.setUid) problems.push("the StatefulSet was not re-created");
    const strays = after.pods.filter((p) => p.owner !== after.setUid);
    if (strays.length) problems.push(`pods not owned by the new StatefulSet: ${strays.map((p) => p.name).join(" ")}`);
    const kept = fs.existsSync(path.join(dir, DATA_FILE)) && fs.readFileSync(path.join(dir, DATA_FILE), "utf8") === token;
    if (!kept) problems.push(`the file ${DATA_FILE} in ${dir} is gone or changed`);
    if (problems.length) throw new Error(problems.join("; "));
    io.result(`pulumi up in ${up.seconds.toFixed(1)} s: claims ${after.claims.map((c) => `${c.name} (same uid, spec ${c.size}, status.capacity ${c.capacity || "none"}, volume ${c.volume})`).join(", ")}; pods ${after.pods.map((p) => p.name).join(" ")} same uids, owned by the new StatefulSet (uid ${before.setUid.slice(0, 8)}… -> ${after.setUid.slice(0, 8)}…); ${DATA_FILE} still in the volume`);

    const steady = await ctx.engine("preview", "ci", "grow-steady", ["--expect-no-changes"]);
    if (!steady.ok) throw new Error(`after the grow, pulumi preview --expect-no-changes reports changes: ${changed(steady).join("; ")}`);

    // Refusals by the program itself (claimGuard.ts), in the preview, before any step: nothing changes.
    const refused = async (name: string, size: string, what: string, reason: RegExp): Promise<string> => {
        await ctx.pulumi(["config", "set", "--stack", "ci", KEY, size]);
        const r = await ctx.engine("preview", "ci", name);
        const log = fs.readFileSync(ctx.path("logs", `engine-${name}.log`), "utf8");
        const said = (`${r.error ?? ""}\n${log}`.match(reason) ?? [])[0];
        if (r.ok || r.exitCode === 0) throw new Error(`the preview of ${what} (${KEY} ${size}) passed`);
        if (!said) throw new Error(`the preview of ${what} failed without the reason ${reason}: ${(r.error ?? "").slice(-800)}`);
        const now = await live(ctx, ns, selector, claimNames);
        if (JSON.stringify(now) !== JSON.stringify(after)) throw new Error(`the cluster changed after the refused preview of ${what}: ${JSON.stringify(now)}`);
        return `${what} (${KEY} ${size}): pulumi preview exits ${r.exitCode}: "${said}"; StatefulSet (same uid), claims and pods unchanged`;
    };
    const smaller = old.replace(/^\d+/, String(Math.max(1, Math.floor(Number(m[1]) / 2))));
    const shrink = await refused("shrink-preview", smaller, "a shrink", new RegExp(`refused before anything changes: ${KEY} ${grown} -> ${smaller} would shrink [^"\n]*`));

    // A class without volume expansion: the API server would refuse the claim patch with 403
    // (PersistentVolumeClaimResize admission), which provider 4.25.0 ignores in a preview
    // (pkg/provider/provider.go:2152); the program reads the claim's class and refuses first.
    const bigger = `${Number(m[1]) * 3}Gi`;
    await ctx.kubectl(["patch", "storageclass", STAND_IN_CLASS, "--type=merge", "-p", '{"allowVolumeExpansion":false}'], { quiet: true });
    let fixed: string;
    try {
        fixed = await refused("fixed-class-preview", bigger, "a grow on a class without volume expansion", new RegExp(`refused before anything changes: ${KEY} ${grown} -> ${bigger} would expand claim [^"\n]*StorageClass ${STAND_IN_CLASS} does not set allowVolumeExpansion: true[^"\n]*`));
    } finally {
        await ctx.kubectl(["patch", "storageclass", STAND_IN_CLASS, "--type=merge", "-p", '{"allowVolumeExpansion":true}'], { quiet: true });
        await ctx.pulumi(["config", "set", "--stack", "ci", KEY, grown]);
    }
    // Back to the grown size: nothing to do.
    const settled = await ctx.engine("preview", "ci", "grow-settled", ["--expect-no-changes"]);
    if (!settled.ok) throw new Error(`after going back to ${grown}, the preview reports changes: ${changed(settled).join("; ")}`);
    io.result(shrink);
    io.result(fixed);
}
