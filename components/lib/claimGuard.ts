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
 * read the cluster: each claim it will expand that exists (PersistentVolumeClaim.get) for its
 * StorageClass (the template's, or the one the API server defaulted), and that class
 * (StorageClass.get), whose `allowVolumeExpansion` the API server's PersistentVolumeClaimResize
 * admission requires. Which claims exist is the stack's other output `volumeClaimOrdinals`: the
 * most replicas each StatefulSet was deployed with (its controller keeps the claims of a scale-down,
 * retention Retain), so a claim of a new replica, which the controller makes with the new size, is
 * never read; a last deploy without that output (an older program) gives the StatefulSet's own
 * replica count, read from the cluster. Those reads are resource reads: they exist only in a run
 * that grows a size (and are discarded by the next one; `--expect-no-changes` does not count reads).
 * The StatefulSet, its size marker and its claim patches take their sizes from the judgement: a
 * refused change leaves all three as deployed, and the run fails with the reasons through the
 * stack output. A size written another way but equal (`5Gi`, `5368709120`) keeps the deployed
 * spelling: nothing changes.
 *
 * A StatefulSet of the last deploy that the run no longer declares (moved to another namespace,
 * removed) is refused too, unless the stack releases it (`volumesReleased`): its claims stay behind
 * unused, and are deleted with its namespace when the stack no longer declares that namespace.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { quantityBytes } from "../../config/schema";

/** The stack output with each growable StatefulSet's sizes: `<namespace>/<name>` -> "<template>=<size>,...". */
export const CLAIM_SIZES_OUTPUT = "volumeClaimSizes";
/** The stack output with the claims of each StatefulSet whose claims the program patches: `<namespace>/<name>` -> the most replicas deployed. */
export const CLAIM_ORDINALS_OUTPUT = "volumeClaimOrdinals";
const READ_STACK_OUTPUTS = "pulumi:pulumi:readStackOutputs";

/** What of a StatefulSet's claims the program declares: plain values, known before anything runs (claimGrowth.ts claimsOf). */
export interface ClaimsOf {
    statefulSet: string;
    namespace: string;
    replicas: number;
    templates: { name: string; size: string }[];
}

/** What the guard knows of the run besides its StatefulSets (main.ts). */
export interface GuardRun {
    /** Every namespace the stack declares, with its config key. */
    namespaces: ReadonlyArray<readonly [key: string, namespace: string]>;
    /** `<namespace>/<name>` of StatefulSets of the last deploy the stack lets go (config key volumesReleased). */
    released: readonly string[];
    /** The config key of `released`. */
    releasedKey: string;
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

/** The last deploy's outputs: each StatefulSet's sizes and, when recorded, its claims; none on a first deploy. */
interface LastDeploy {
    sizes: Map<string, string>;
    ordinals?: Map<string, number>;
}

function readLastDeploy(): Promise<LastDeploy> {
    return pulumi.runtime.invoke(READ_STACK_OUTPUTS, { name: stackName() }).then(
        (r: { outputs?: Record<string, unknown> } | undefined) => {
            const entries = (name: string) => Object.entries((r?.outputs?.[name] ?? {}) as object);
            const ordinals = r?.outputs?.[CLAIM_ORDINALS_OUTPUT];
            return {
                sizes: new Map(entries(CLAIM_SIZES_OUTPUT).filter((e): e is [string, string] => typeof e[1] === "string")),
                ...(ordinals && typeof ordinals === "object" ? { ordinals: new Map(entries(CLAIM_ORDINALS_OUTPUT).filter((e): e is [string, number] => Number.isInteger(e[1]) && e[1] >= 0)) } : {}),
            };
        },
        (err: unknown) => {
            pulumi.log.warn(`volume sizes not judged against the last deploy: the stack's outputs could not be read (${err instanceof Error ? err.message : String(err)}); a shrink is then refused by the API server at the claim patch only`);
            return { sizes: new Map<string, string>() };
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

/**
 * An Output's value, or its failure (a read of an object that does not exist); `apply` never runs
 * on a failure. The read resource's own promises (urn, id, the other fields) fail with it: they are
 * given a handler, so a failed read is one refusal, not a trail of unhandled rejections.
 */
function known<T>(resource: pulumi.CustomResource, o: pulumi.Output<T>): Promise<T> {
    const quiet = (x: pulumi.Output<unknown>) => {
        const parts = x as unknown as { promise(): Promise<unknown>; isKnown: Promise<unknown>; isSecret?: Promise<unknown> };
        for (const p of [parts.promise(), parts.isKnown, parts.isSecret]) p?.catch(() => undefined);
    };
    for (const v of Object.values(resource)) if (pulumi.Output.isInstance(v)) quiet(v);
    return (o as unknown as { promise(): Promise<T> }).promise();
}

/** The refusals of growing these claims (ordinals below `existing`): each claim's StorageClass must allow volume expansion (read from the cluster). */
async function expansionRefusals(name: string, claims: ClaimsOf, grows: SizeChange[], classOf: Record<string, string | undefined>, existing: number, opts: pulumi.CustomResourceOptions): Promise<string[]> {
    const refusals: string[] = [];
    const classes = new Map<string, Promise<boolean>>();
    const expandable = (cls: string) => {
        if (!classes.has(cls)) {
            const sc = k8s.storage.v1.StorageClass.get(`${name}-growth-class-${cls}`, cls, opts);
            classes.set(cls, known(sc, sc.allowVolumeExpansion).then((v) => v === true));
        }
        return classes.get(cls)!;
    };
    for (const g of grows) {
        // A claim of a new replica does not exist yet: the controller makes it with the new size.
        for (let i = 0; i < Math.min(claims.replicas, existing); i++) {
            const claim = `${g.template}-${claims.statefulSet}-${i}`;
            // The template's class, or the one the API server gave the claim (the cluster's default then).
            try {
                let cls = classOf[g.template];
                if (cls === undefined) {
                    const pvc = k8s.core.v1.PersistentVolumeClaim.get(`${name}-growth-${claim}`, `${claims.namespace}/${claim}`, opts);
                    cls = (await known(pvc, pvc.spec.storageClassName)) ?? undefined;
                }
                if (!cls || !(await expandable(cls))) refusals.push(expansionRefusal(claims, g, claim, cls || undefined));
            } catch (err) {
                refusals.push(`refused before anything changes: ${qualified(g.key)} ${g.from} -> ${g.to}: claim ${claims.namespace}/${claim} or its StorageClass could not be read to tell whether it can expand (${err instanceof Error ? err.message : String(err)})`);
            }
        }
    }
    return refusals;
}

/** The replicas of a deployed StatefulSet, read from the cluster: its claims when the last deploy did not record them. */
async function deployedReplicas(name: string, claims: ClaimsOf, opts: pulumi.CustomResourceOptions): Promise<number> {
    const set = k8s.apps.v1.StatefulSet.get(`${name}-growth-replicas`, `${claims.namespace}/${claims.statefulSet}`, opts);
    const spec = await known(set, set.spec);
    return typeof spec?.replicas === "number" ? spec.replicas : 1;
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

interface Judgement extends JudgedSizes {
    id: string;
    /** The claims that exist after this run (the most replicas deployed); undefined when the program does not patch them. */
    ordinals?: number;
}

const byKey = <T>(entries: Array<[string, T]>): Record<string, T> => Object.fromEntries(entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));

/**
 * The volume guard of one program run (main.ts makes it and hands it to the components whose
 * StatefulSets can grow): the sizes each StatefulSet declares, the judgement of each against the
 * stack's last outputs (read once per run), and the StatefulSets of the last deploy it no longer
 * declares.
 */
export class ClaimGuard {
    private readonly judgements: Promise<Judgement>[] = [];
    private last: Promise<LastDeploy> | undefined;

    constructor(private readonly run: GuardRun) {}

    private lastDeploy(): Promise<LastDeploy> {
        this.last ??= readLastDeploy();
        return this.last;
    }

    /**
     * The stack output's value: every growable StatefulSet of this run, sorted. It fails with every
     * refusal of this run (a RunError: the language host reports its message without a stack, and the
     * preview or update fails), so the refused sizes are never recorded as deployed.
     */
    async declaredSizes(): Promise<Record<string, string>> {
        const judged = await Promise.all(this.judgements);
        const refusals = [...judged.flatMap((j) => j.refusals), ...this.goneRefusals(judged, await this.lastDeploy())];
        if (refusals.length) throw new pulumi.RunError(refusals.join("\n"));
        return byKey(judged.map((j) => [j.id, j.key]));
    }

    /** The other output: the claims of each patched StatefulSet after this run (it never fails: declaredSizes says why a run is refused). */
    async declaredOrdinals(): Promise<Record<string, number>> {
        const judged = await Promise.all(this.judgements);
        return byKey(judged.filter((j) => j.ordinals !== undefined).map((j) => [j.id, j.ordinals!]));
    }

    /** The StatefulSets of the last deploy this run no longer declares, unless released: their claims would stay behind or go with their namespace. */
    private goneRefusals(judged: Judgement[], last: LastDeploy): string[] {
        const declared = new Map(judged.map((j) => [j.id, j]));
        const namespaces = new Set(this.run.namespaces.map(([, ns]) => ns));
        const released = qualified(this.run.releasedKey);
        const out: string[] = [];
        for (const [id, sizes] of last.sizes) {
            if (declared.has(id) || this.run.released.includes(id)) continue;
            const [namespace, statefulSet] = id.split("/");
            const count = last.ordinals?.get(id);
            const templates = [...parseSizes(sizes).keys()];
            const claims = count === undefined ? templates.map((t) => `${t}-${statefulSet}-<ordinal>`) : templates.flatMap((t) => Array.from({ length: count }, (_, i) => `${t}-${statefulSet}-${i}`));
            const moved = [...declared.keys()].find((d) => d.endsWith(`/${statefulSet}`));
            const movedTo = moved ? moved.split("/")[0] : undefined;
            const keys = movedTo ? this.run.namespaces.filter(([, ns]) => ns === movedTo).map(([k]) => qualified(k)) : [];
            const what = moved ? `would move to ${moved}${keys.length ? ` (${keys.join(", ")} ${namespace} -> ${movedTo})` : ""}, where it starts with empty volumes` : "is no longer declared";
            const where = namespaces.has(namespace)
                ? `its claims ${claims.join(", ")} stay in ${namespace}, unused`
                : `its claims ${claims.join(", ")} would be deleted with the namespace ${namespace}, which the stack no longer declares`;
            const back = moved && keys.length ? `; or set ${keys.join(", ")} back to ${namespace}` : "";
            out.push(`refused before anything changes: StatefulSet ${id} of the last deploy ${what}: ${where}; to let its data go, back it up first (docs/backups.md), then add "${id}" to ${released} for this run${back}`);
        }
        return out;
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
        const declaredSizes = Object.fromEntries(claims.templates.map((t) => [t.name, t.size]));
        const keyOf = (sizes: Record<string, string>) => claims.templates.map((t) => `${t.name}=${sizes[t.name]}`).join(",");
        const accepted = (sizes: Record<string, string>, ordinals: number): Judgement => ({ id, key: keyOf(sizes), sizes, refusals: [], ...(patched ? { ordinals } : {}) });
        const judged = this.lastDeploy().then(async (last): Promise<Judgement> => {
            const was = last.sizes.get(id);
            if (was === undefined) return accepted(declaredSizes, claims.replicas);
            const before = parseSizes(was);
            // The same size written another way keeps the deployed spelling: no change at all.
            const sizes = Object.fromEntries(claims.templates.map((t) => {
                const from = before.get(t.name);
                return [t.name, from !== undefined && quantityBytes(from) === quantityBytes(t.size) ? from : t.size];
            }));
            const { shrinks, grows } = sizeChanges(claims, was, keys);
            const refusals = shrinks.map((c) => shrinkRefusal(claims, c));
            let existing = last.ordinals?.get(id);
            if (!refusals.length && grows.length && patched) {
                existing ??= await deployedReplicas(name, claims, opts);
                refusals.push(...(await expansionRefusals(name, claims, grows, classOf, existing, opts)));
            }
            if (!refusals.length) return accepted(sizes, Math.max(existing ?? 0, claims.replicas));
            const kept = Object.fromEntries(claims.templates.map((t) => [t.name, before.get(t.name) ?? t.size]));
            return { id, key: keyOf(kept), sizes: kept, refusals };
        }).catch((err: unknown) => ({
            // Never a failed judgement: the StatefulSet's inputs wait for it, and what depends on the StatefulSet with them.
            id,
            key: keyOf(declaredSizes),
            sizes: declaredSizes,
            refusals: [`refused before anything changes: the last deployed sizes of StatefulSet ${id} (stack output ${CLAIM_SIZES_OUTPUT}) could not be judged: ${err instanceof Error ? err.message : String(err)}`],
        }));
        this.judgements.push(judged);
        return judged;
    }
}
