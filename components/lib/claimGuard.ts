/**
 * A data volume that must not shrink, and one whose StorageClass cannot expand it, refused by the
 * program itself before anything changes (issue 29), with the config key, the old and the new size.
 *
 * The previous sizes are the stack's own last outputs (`volumeClaimSizes`, written by every run
 * through main.ts), read with the engine's built-in invoke `pulumi:pulumi:readStackOutputs` (pulumi
 * pkg/resource/deploy/builtins.go, CLI 3.259.0): an invoke is not a resource, so it adds no step, and
 * it reads the last finished run's outputs (a running update keeps the stack's old outputs until
 * the program ends: SameStep keeps them; the file backend reads its checkpoint, Pulumi Cloud its
 * latest state). A first deploy has none: nothing to judge. Only when a size grows does the program
 * read the cluster: each claim it will expand (PersistentVolumeClaim.get) for its StorageClass (the
 * template's, or the one the API server defaulted), and that class (StorageClass.get), whose
 * `allowVolumeExpansion` the API server's PersistentVolumeClaimResize admission requires. Those
 * reads are resource reads: they exist only in a run that grows a size (and are discarded by the
 * next one; `--expect-no-changes` does not count reads). The StatefulSet, its size marker and its
 * claim patches take their sizes from the judgement: a refused change leaves all three as deployed,
 * and the run fails with the reasons through the stack output.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { quantityBytes } from "../../config/schema";

/** The stack output with each growable StatefulSet's sizes: `<namespace>/<name>` -> "<template>=<size>,...". */
export const CLAIM_SIZES_OUTPUT = "volumeClaimSizes";
const READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs";

/** What of a StatefulSet's claims the program declares: plain values, known before anything runs (claimGrowth.ts claimsOf). */
export interface ClaimsOf {
    statefulSet: string;
    namespace: string;
    replicas: number;
    templates: { name: string; size: string }[];
}

/** The stack's own fully qualified name; the file backend's organization is "organization". */
function stackName(): string {
    let org = "organization";
    try {
        org = pulumi.getOrganization();
    } catch {
        // An engine that does not pass the organization (the offline render's mocks).
    }
    return `${org}/${pulumi.getProject()}/${pulumi.getStack()}`;
}

/** The sizes of the stack's last outputs; none on a first deploy. */
function readPreviousSizes(): Promise<Map<string, string>> {
    return pulumi.runtime.invoke(READ_STACK_OUTPUTS, { name: stackName() }).then(
        (r: { outputs?: Record<string, unknown> } | undefined) => {
            const v = r?.outputs?.[CLAIM_SIZES_OUTPUT];
            return new Map(Object.entries(v && typeof v === "object" ? v : {}).filter((e): e is [string, string] => typeof e[1] === "string"));
        },
        (err: unknown) => {
            pulumi.log.warn(`volume sizes not judged against the last deploy: the stack's outputs could not be read (${err instanceof Error ? err.message : String(err)}); a shrink is then refused by the API server at the claim patch only`);
            return new Map<string, string>();
        },
    );
}

export interface SizeChange {
    template: string;
    key: string;
    from: string;
    to: string;
}

function parseSizes(value: string): Map<string, string> {
    const out = new Map<string, string>();
    for (const part of value.split(",")) {
        const i = part.indexOf("=");
        if (i > 0) out.set(part.slice(0, i), part.slice(i + 1));
    }
    return out;
}

/** The templates whose size shrinks and grows against the last deployed sizes ("<template>=<size>,..."). */
export function sizeChanges(claims: ClaimsOf, was: string, keys: Record<string, string>): { shrinks: SizeChange[]; grows: SizeChange[] } {
    const before = parseSizes(was);
    const shrinks: SizeChange[] = [];
    const grows: SizeChange[] = [];
    for (const t of claims.templates) {
        const from = before.get(t.name);
        if (from === undefined) continue;
        const change = { template: t.name, key: keys[t.name], from, to: t.size };
        const [a, b] = [quantityBytes(from), quantityBytes(t.size)];
        if (b < a) shrinks.push(change);
        else if (b > a) grows.push(change);
    }
    return { shrinks, grows };
}

const qualified = (key: string) => (key.includes(":") ? key : `${pulumi.getProject()}:${key}`);

export function shrinkRefusal(claims: ClaimsOf, c: SizeChange): string {
    return `refused before anything changes: ${qualified(c.key)} ${c.from} -> ${c.to} would shrink volume ${c.template} of StatefulSet ${claims.namespace}/${claims.statefulSet}, and a claim cannot shrink; set ${qualified(c.key)} back to ${c.from} or more`;
}

export function expansionRefusal(claims: ClaimsOf, c: SizeChange, claim: string, storageClass: string | undefined): string {
    const why = storageClass ? `its StorageClass ${storageClass} does not set allowVolumeExpansion: true` : "it has no StorageClass (a claim without one cannot be expanded)";
    return `refused before anything changes: ${qualified(c.key)} ${c.from} -> ${c.to} would expand claim ${claims.namespace}/${claim} of StatefulSet ${claims.namespace}/${claims.statefulSet}, but ${why}, so the API server refuses its expansion; ${storageClass ? `set allowVolumeExpansion: true on StorageClass ${storageClass} if its provisioner can expand volumes, or ` : ""}set ${qualified(c.key)} back to ${c.from}`;
}

/** An Output's value, or its failure (a read of an object that does not exist); `apply` never runs on a failure. */
const known = <T>(o: pulumi.Output<T>): Promise<T> => (o as unknown as { promise(): Promise<T> }).promise();

/** The refusals of growing these claims: each claim's StorageClass must allow volume expansion (read from the cluster). */
async function expansionRefusals(name: string, claims: ClaimsOf, grows: SizeChange[], classOf: Record<string, string | undefined>, opts: pulumi.CustomResourceOptions): Promise<string[]> {
    const refusals: string[] = [];
    const classes = new Map<string, Promise<boolean>>();
    const expandable = (cls: string) => {
        if (!classes.has(cls)) {
            const sc = k8s.storage.v1.StorageClass.get(`${name}-growth-class-${cls}`, cls, opts);
            classes.set(cls, known(sc.allowVolumeExpansion).then((v) => v === true));
        }
        return classes.get(cls)!;
    };
    for (const g of grows) {
        for (let i = 0; i < claims.replicas; i++) {
            const claim = `${g.template}-${claims.statefulSet}-${i}`;
            // The template's class, or the one the API server gave the claim (the cluster's default then).
            try {
                const cls = classOf[g.template] ?? (await known(k8s.core.v1.PersistentVolumeClaim.get(`${name}-growth-${claim}`, `${claims.namespace}/${claim}`, opts).spec.storageClassName)) ?? undefined;
                if (!cls || !(await expandable(cls))) refusals.push(expansionRefusal(claims, g, claim, cls || undefined));
            } catch (err) {
                refusals.push(`refused before anything changes: ${qualified(g.key)} ${g.from} -> ${g.to}: claim ${claims.namespace}/${claim} or its StorageClass could not be read to tell whether it can expand (${err instanceof Error ? err.message : String(err)})`);
            }
        }
    }
    return refusals;
}

/** The sizes a StatefulSet is registered with: the declared ones, or on a refusal the last deployed ones. */
export interface JudgedSizes {
    /** "<template>=<size>,...": the size annotation and the marker's keeper. */
    key: string;
    /** Each template's size. */
    sizes: Record<string, string>;
    /** Why the declared sizes were refused; empty when accepted. */
    refusals: string[];
}

/**
 * The volume guard of one program run (main.ts makes it and hands it to the components whose
 * StatefulSets can grow): the sizes each StatefulSet declares, the judgement of each against the
 * stack's last outputs, read once per run.
 */
export class ClaimGuard {
    private readonly declared = new Map<string, string>();
    private readonly judgements: Promise<JudgedSizes>[] = [];
    private previous: Promise<Map<string, string>> | undefined;

    /**
     * The stack output's value: every growable StatefulSet of this run, sorted. It fails with every
     * refusal of this run (a RunError: the language host reports its message without a stack, and the
     * preview or update fails), so the refused sizes are never recorded as deployed.
     */
    async declaredSizes(): Promise<Record<string, string>> {
        const refusals = (await Promise.all(this.judgements)).flatMap((j) => j.refusals);
        if (refusals.length) throw new pulumi.RunError(refusals.join("\n"));
        return Object.fromEntries([...this.declared].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
    }

    /**
     * The judgement of a StatefulSet's sizes against the last deploy. Accepted: the declared sizes.
     * Refused: the StatefulSet, its marker and its claim patches keep the last deployed sizes, so none
     * of them changes, and the stack output `volumeClaimSizes` fails the run with the reasons
     * (declaredSizes). Failing their inputs instead would leave what depends on the StatefulSet
     * waiting forever (the SDK never resolves a resource whose inputs failed). `patched`: its claims
     * are expanded by the program (not an autoscaled StatefulSet), so a growth needs classes that
     * allow expansion.
     */
    judge(name: string, claims: ClaimsOf, keys: Record<string, string>, classOf: Record<string, string | undefined>, patched: boolean, opts: pulumi.CustomResourceOptions): Promise<JudgedSizes> {
        const id = `${claims.namespace}/${claims.statefulSet}`;
        const declaredKey = claims.templates.map((t) => `${t.name}=${t.size}`).join(",");
        const declaredSizes = Object.fromEntries(claims.templates.map((t) => [t.name, t.size]));
        this.declared.set(id, declaredKey);
        this.previous ??= readPreviousSizes();
        const judged = this.previous.then(async (prev): Promise<JudgedSizes> => {
            const was = prev.get(id);
            if (was === undefined) return { key: declaredKey, sizes: declaredSizes, refusals: [] };
            const { shrinks, grows } = sizeChanges(claims, was, keys);
            const refusals = shrinks.map((c) => shrinkRefusal(claims, c));
            if (!refusals.length && grows.length && patched) refusals.push(...(await expansionRefusals(name, claims, grows, classOf, opts)));
            if (!refusals.length) return { key: declaredKey, sizes: declaredSizes, refusals: [] };
            const before = parseSizes(was);
            const kept = Object.fromEntries(claims.templates.map((t) => [t.name, before.get(t.name) ?? t.size]));
            return { key: claims.templates.map((t) => `${t.name}=${kept[t.name]}`).join(","), sizes: kept, refusals };
        }).catch((err: unknown) => ({
            // Never a failed judgement: the StatefulSet's inputs wait for it, and what depends on the StatefulSet with them.
            key: declaredKey,
            sizes: declaredSizes,
            refusals: [`refused before anything changes: the last deployed sizes of StatefulSet ${id} (stack output ${CLAIM_SIZES_OUTPUT}) could not be judged: ${err instanceof Error ? err.message : String(err)}`],
        }));
        this.judgements.push(judged);
        return judged;
    }
}
