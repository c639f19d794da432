/**
 * A StatefulSet whose data volumes can grow (issue 29): a bigger size in the configuration is a
 * preview that succeeds and names what happens, and a `pulumi up` that keeps the claims, their data
 * and the running pods. The parts, each from pulumi-kubernetes v4.25.0 (the version package.json
 * pins; docs/e2e.md "Growing a data volume" has the line references):
 *
 * - The StatefulSet always carries `pulumi.com/deletionPropagationPolicy: orphan`. The provider
 *   replaces a StatefulSet whose volumeClaimTemplates changed (forceNewProperties), deleting the
 *   old object first because its name stays (Diff: DeleteBeforeReplace). The delete reads the
 *   policy from the old state, so it must be on the object before the size changes: with it the
 *   pods (and ControllerRevisions) are orphaned, not deleted, and the new StatefulSet, which has
 *   the same selector and pod template, adopts them.
 * - The StatefulSet's annotation `ops/volume-claim-sizes` ("<template>=<size>,...") is computed
 *   from a RandomString whose keepers are the sizes: the engine replaces that RandomString exactly
 *   when a size changes, so in a preview the annotation is unknown exactly then. The provider skips
 *   its dry-run of a create whose inputs hold an unknown (provider.go Create, `skipPreview`); that
 *   dry-run of the replacement under the same name is what the API server refuses ("updates to
 *   statefulset spec for fields other than ... are forbidden", pulumi-kubernetes#4328). Unchanged
 *   sizes: the annotation is known and stays the same, so no diff.
 * - The claims a StatefulSet made keep their size when it is replaced (they outlive it: retention
 *   Retain). Each claim `<template>-<statefulset>-<ordinal>` of the configured replicas (not of an
 *   autoscaled StatefulSet: see below) is expanded
 *   in place by a `PersistentVolumeClaimPatch` (server-side apply of spec.resources.requests.storage
 *   only), after the StatefulSet (which makes the claims). Its preview is a dry-run of that apply,
 *   so the API server judges it before anything changes: a shrink below the claim's capacity is
 *   refused with its reason (422). A claim whose StorageClass has no `allowVolumeExpansion` is
 *   refused with 403 (PersistentVolumeClaimResize admission), which the provider ignores in a
 *   preview (provider.go Update, `IsForbidden`): only `pulumi up` refuses it, at the patch, after
 *   the StatefulSet was re-created (pods and claims kept). `retainOnDelete`: a patch that goes (fewer replicas)
 *   leaves its claim as it is; the provider could not release the required field anyway.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";

import { CLAIM_SIZES_ANNOTATION, CLAIM_SIZE_KEYS_ANNOTATION, ORPHAN_ANNOTATION } from "./claimAnnotations";
import type { ClaimGuard, ClaimsOf } from "./claimGuard";

export { CLAIM_SIZES_ANNOTATION, CLAIM_SIZE_KEYS_ANNOTATION, ORPHAN_ANNOTATION };
export type { ClaimGuard, ClaimsOf };

const plainString = (v: unknown, what: string): string => {
    if (typeof v !== "string" || v === "") throw new Error(`growableStatefulSet: ${what} must be a plain string, got ${typeof v}`);
    return v;
};

/** The claims of a StatefulSet's arguments; an error names what is not a plain value. */
export function claimsOf(args: k8s.apps.v1.StatefulSetArgs): ClaimsOf {
    const meta = args.metadata as { name?: unknown; namespace?: unknown } | undefined;
    const spec = args.spec as { replicas?: unknown; volumeClaimTemplates?: unknown } | undefined;
    const statefulSet = plainString(meta?.name, "metadata.name");
    const namespace = plainString(meta?.namespace, `metadata.namespace of ${statefulSet}`);
    const replicas = spec?.replicas ?? 1;
    if (typeof replicas !== "number" || !Number.isInteger(replicas) || replicas < 0) throw new Error(`growableStatefulSet: spec.replicas of ${statefulSet} must be a plain integer`);
    const list = spec?.volumeClaimTemplates;
    if (!Array.isArray(list) || list.length === 0) throw new Error(`growableStatefulSet: ${statefulSet} has no plain volumeClaimTemplates list`);
    const templates = list.map((t: any, i: number) => ({
        name: plainString(t?.metadata?.name, `volumeClaimTemplates[${i}].metadata.name of ${statefulSet}`),
        size: plainString(t?.spec?.resources?.requests?.storage, `volumeClaimTemplates[${i}] storage request of ${statefulSet}`),
    }));
    return { statefulSet, namespace, replicas, templates };
}

/** "<template>=<size>,..." in template order: the annotation's value. */
export const sizesKey = (c: ClaimsOf): string => c.templates.map((t) => `${t.name}=${t.size}`).join(",");

/** The claims the StatefulSet controller made: `<template>-<statefulset>-<ordinal>`. */
export function claimNames(c: ClaimsOf): { template: string; size: string; claim: string }[] {
    return c.templates.flatMap((t) => Array.from({ length: c.replicas }, (_, i) => ({ template: t.name, size: t.size, claim: `${t.name}-${c.statefulSet}-${i}` })));
}

function withAnnotations(annotations: unknown, extra: pulumi.Input<Record<string, string>>): pulumi.Output<Record<string, string>> {
    return pulumi.all([annotations as pulumi.Input<Record<string, string> | undefined>, extra]).apply(([a, e]) => ({ ...(a ?? {}), ...e }));
}

const autoscaled = (opts: pulumi.CustomResourceOptions) => (opts.ignoreChanges ?? []).includes("spec.replicas");

/**
 * A StatefulSet with claim templates that can grow: the StatefulSet itself (returned), the size
 * marker, and one claim patch per claim of the configured replicas. `sizeKeys`: the config key of
 * each template's size (config/schema.ts keyOf), named by npm run diff when a size shrinks.
 * `guard`: the run's volume guard (main.ts), which judges the sizes against the last deploy.
 */
export function growableStatefulSet(name: string, args: k8s.apps.v1.StatefulSetArgs, opts: pulumi.CustomResourceOptions, sizeKeys: Record<string, string>, guard: ClaimGuard): k8s.apps.v1.StatefulSet {
    const claims = claimsOf(args);
    const missing = claims.templates.filter((t) => !sizeKeys[t.name]);
    if (missing.length) throw new Error(`growableStatefulSet: no config key for the size of ${missing.map((t) => t.name).join(", ")} of ${claims.statefulSet}`);
    const keys = claims.templates.map((t) => `${t.name}=${sizeKeys[t.name]}`).join(",");
    const child: pulumi.CustomResourceOptions = opts.parent ? { parent: opts.parent } : {};
    // An autoscaled StatefulSet (its replica count ignored, owned by a HorizontalPodAutoscaler):
    // which claims exist is the autoscaler's doing, and a patch of a claim that does not exist yet
    // would create it (server-side apply) and fail. Its claims are not patched: a bigger size
    // re-creates it around its pods, new claims get the new size, existing ones keep theirs.
    const patched = !autoscaled(opts);
    // A shrink, or a growth on a class without volume expansion, is refused before anything changes
    // (claimGuard.ts): the marker, the StatefulSet and the patches take the judged sizes.
    const templates = (args.spec as { volumeClaimTemplates: any[] }).volumeClaimTemplates;
    const classOf = Object.fromEntries(templates.map((t) => [t.metadata.name, t.spec?.storageClassName ?? undefined]));
    // Outputs of the judgement's promise (no apply each: this runs for every claim of the program).
    const judged = guard.judge(name, claims, sizeKeys, classOf, patched, child);
    const judgedKey = pulumi.output(judged.then((j) => j.key));
    const sizeOf = (template: string) => pulumi.output(judged.then((j) => j.sizes[template]));
    const marker = new random.RandomString(`${name}-claim-sizes`, { length: 8, special: false, upper: false, keepers: { sizes: judgedKey } }, child);
    const meta = args.metadata as Record<string, unknown>;
    const set = new k8s.apps.v1.StatefulSet(name, {
        ...args,
        metadata: {
            ...meta,
            annotations: withAnnotations(meta.annotations, pulumi.all([marker.result, judgedKey]).apply(([, k]) => ({ [ORPHAN_ANNOTATION]: "orphan", [CLAIM_SIZES_ANNOTATION]: k, [CLAIM_SIZE_KEYS_ANNOTATION]: keys }))),
        },
        spec: {
            ...(args.spec as k8s.types.input.apps.v1.StatefulSetSpec),
            volumeClaimTemplates: templates.map((t) => ({ ...t, spec: { ...t.spec, resources: { ...t.spec.resources, requests: { ...t.spec.resources.requests, storage: sizeOf(t.metadata.name) } } } })),
        },
    }, opts);
    if (!patched) return set;
    for (const c of claimNames(claims)) {
        new k8s.core.v1.PersistentVolumeClaimPatch(`${name}-${c.claim}`, {
            metadata: { name: c.claim, namespace: claims.namespace },
            spec: { resources: { requests: { storage: sizeOf(c.template) } } },
        }, { ...child, dependsOn: [set], retainOnDelete: true });
    }
    return set;
}
