/**
 * Issue 29: a shrink, and a growth on a StorageClass without volume expansion, refused by the
 * program itself before anything changes (components/lib/claimGuard.ts), under the render's mocks:
 * the stack's last outputs and the cluster's objects are what a test sets in mockDeployment. The
 * engine side (the same refusals by `pulumi preview`, the StatefulSet, claims and pods unchanged)
 * runs in `npm run e2e` step 4b (E2E_LAB=volume-growth runs it alone).
 */
import assert from "node:assert/strict";
import { after, describe, it } from "node:test";
import { mockDeployment } from "../cli/harness/mocks";
import { runProgram, type ProgramRun } from "../cli/harness/program";
import { readStackValues } from "../cli/harness/stackConfig";
import { CLAIM_SIZES_ANNOTATION } from "../components/lib/claimAnnotations";
import { CLAIM_ORDINALS_OUTPUT, CLAIM_SIZES_OUTPUT } from "../components/lib/claimGuard";

const values = readStackValues("ci");
const run = (lastOutputs: Record<string, unknown>, cluster: Record<string, Record<string, unknown>> = {}, overrides: Record<string, unknown> = {}): Promise<ProgramRun> => {
    mockDeployment.lastOutputs = lastOutputs;
    mockDeployment.cluster = cluster;
    const v = Object.keys(overrides).length ? readStackValues("ci", overrides) : values;
    return runProgram({ project: v.project, stack: "ci", config: v.config, secretKeys: v.secretKeys });
};
after(() => {
    mockDeployment.lastOutputs = {};
    mockDeployment.cluster = {};
});

/** What the run registered for PostgreSQL's volume: template, size annotation, marker keeper, claim patch. */
function postgresSizes(r: ProgramRun): string[] {
    const set = r.resources.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && (x.inputs as any).metadata.name === "postgres")!.inputs as any;
    const marker = r.resources.find((x) => x.type === "random:index/randomString:RandomString" && x.name === "postgres-claim-sizes")!.inputs as any;
    const patch = r.resources.find((x) => x.type === "kubernetes:core/v1:PersistentVolumeClaimPatch" && (x.inputs as any).metadata.name === "data-postgres-0")!.inputs as any;
    return [set.spec.volumeClaimTemplates[0].spec.resources.requests.storage, set.metadata.annotations[CLAIM_SIZES_ANNOTATION], marker.keepers.sizes, patch.spec.resources.requests.storage];
}

const PVC = "kubernetes:core/v1:PersistentVolumeClaim data/data-postgres-0";
const CLASS = (name: string) => `kubernetes:storage.k8s.io/v1:StorageClass ${name}`;

describe("volume sizes judged against the last deploy", () => {
    let first: ProgramRun;
    it("a first deploy (no last outputs): nothing judged, nothing read; the stack output records every growable StatefulSet's sizes", async () => {
        first = await run({});
        assert.deepEqual(first.errors, []);
        const sizes = first.outputs[CLAIM_SIZES_OUTPUT] as Record<string, string>;
        const sets = first.resources.filter((x) => x.type === "kubernetes:apps/v1:StatefulSet" && (x.inputs as any).metadata.annotations?.[CLAIM_SIZES_ANNOTATION]);
        assert.ok(sets.length >= 7);
        assert.deepEqual(sizes, Object.fromEntries(sets.map((s) => [`${(s.inputs as any).metadata.namespace}/${(s.inputs as any).metadata.name}`, (s.inputs as any).metadata.annotations[CLAIM_SIZES_ANNOTATION]]).sort()));
        assert.equal(sizes["data/postgres"], "data=5Gi", "Pulumi.ci.yaml postgresVolumeSize");
        assert.deepEqual(postgresSizes(first), ["5Gi", "data=5Gi", "data=5Gi", "5Gi"]);
    });

    it("in one run: a shrink, a growth on a class without allowVolumeExpansion, a growth of a claim without a class, each refused with the key, both sizes and the reason; an autoscaled StatefulSet's growth and unchanged sizes judged without a read", async () => {
        const last = { ...(first.outputs[CLAIM_SIZES_OUTPUT] as Record<string, string>), "data/postgres": "data=8Gi", "data/object-store": "data=2Gi", "data/redis": "data=512Mi", "workflow/workflow-worker": "data=1Gi" };
        const claimsOf = (set: string) => first.resources.filter((x) => x.type === "kubernetes:core/v1:PersistentVolumeClaimPatch" && (x.inputs as any).metadata.name.startsWith(`data-${set}-`)).map((x) => `${(x.inputs as any).metadata.namespace}/${(x.inputs as any).metadata.name}`);
        const [store, redis] = [claimsOf("object-store"), claimsOf("redis")];
        assert.ok(store.length >= 1 && redis.length >= 1, `${store} ${redis}`);
        // Only these claims and this class exist: a read of anything else (an unchanged or autoscaled StatefulSet's) would fail the run.
        const cluster = Object.fromEntries([
            ...store.map((c) => [`kubernetes:core/v1:PersistentVolumeClaim ${c}`, { spec: { storageClassName: "standard" } }]),
            ...redis.map((c) => [`kubernetes:core/v1:PersistentVolumeClaim ${c}`, { spec: {} }]),
            [CLASS("standard"), { provisioner: "x" }],
        ]);
        const r = await run({ [CLAIM_SIZES_OUTPUT]: last, [CLAIM_ORDINALS_OUTPUT]: first.outputs[CLAIM_ORDINALS_OUTPUT] }, cluster);
        assert.equal(r.errors.length, 1, r.errors.join("\n"));
        const said = r.errors[0].replace(/^stack output volumeClaimSizes: /, "").split("\n").sort();
        assert.deepEqual(said, [
            ...store.map((c) => `refused before anything changes: ops:objectStoreVolumeSize 2Gi -> 5Gi would expand claim ${c} of StatefulSet data/object-store, but its StorageClass standard does not set allowVolumeExpansion: true, so the API server refuses its expansion; set allowVolumeExpansion: true on StorageClass standard if its provisioner can expand volumes, or set ops:objectStoreVolumeSize back to 2Gi`),
            "refused before anything changes: ops:postgresVolumeSize 8Gi -> 5Gi would shrink volume data of StatefulSet data/postgres, and a claim cannot shrink; set ops:postgresVolumeSize back to 8Gi or more",
            ...redis.map((c) => `refused before anything changes: ops:redisVolumeSize 512Mi -> 1Gi would expand claim ${c} of StatefulSet data/redis, but it has no StorageClass (a claim without one cannot be expanded), so the API server refuses its expansion; set ops:redisVolumeSize back to 512Mi`),
        ].sort());
        // Refused: the StatefulSet, its marker and its claim patch keep the deployed size.
        assert.deepEqual(postgresSizes(r), ["8Gi", "data=8Gi", "data=8Gi", "8Gi"]);
        const annotation = (x: ProgramRun, name: string) => (x.resources.find((y) => y.type === "kubernetes:apps/v1:StatefulSet" && (y.inputs as any).metadata.name === name)!.inputs as any).metadata.annotations[CLAIM_SIZES_ANNOTATION];
        assert.equal(annotation(r, "object-store"), "data=2Gi");
        assert.equal(annotation(r, "redis"), "data=512Mi");
        // Accepted: the autoscaled workers grow (no class needed: their claims are not patched); the rest as declared.
        assert.equal(annotation(r, "workflow-worker"), "data=5Gi");
        assert.equal(annotation(r, "search"), annotation(first, "search"));
    });

    it("a growth on a class that allows volume expansion: goes through with the new size; a last size that is not a quantity is refused, not a hang", async () => {
        const r = await run({ [CLAIM_SIZES_OUTPUT]: { "data/postgres": "data=2Gi", "data/redis": "data=lots" }, [CLAIM_ORDINALS_OUTPUT]: { "data/postgres": 1 } }, { [PVC]: { spec: { storageClassName: "standard" } }, [CLASS("standard")]: { provisioner: "x", allowVolumeExpansion: true } });
        assert.equal(r.errors.length, 1);
        assert.match(r.errors[0], /^stack output volumeClaimSizes: refused before anything changes: the last deployed sizes of StatefulSet data\/redis \(stack output volumeClaimSizes\) could not be judged: /);
        assert.deepEqual(postgresSizes(r), ["5Gi", "data=5Gi", "data=5Gi", "5Gi"]);
    });
});

/** The refusals of a run, one a line, without the output's prefix. */
const refusalsOf = (r: ProgramRun) => r.errors.flatMap((e) => e.replace(/^stack output volumeClaimSizes: /, "").split("\n")).sort();
const setOf = (r: ProgramRun, name: string) => r.resources.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && (x.inputs as any).metadata.name === name)!.inputs as any;

describe("issue 42 class 4: the guard and replicas, namespace moves, equal quantities", () => {
    let first: ProgramRun;
    it("a first deploy records each patched StatefulSet's claims (the most replicas deployed), none for the autoscaled workers", async () => {
        first = await run({});
        assert.deepEqual(first.errors, []);
        const ordinals = first.outputs[CLAIM_ORDINALS_OUTPUT] as Record<string, number>;
        assert.equal(ordinals["data/postgres"], 1);
        assert.equal(ordinals["column-store/column-store-shard-0"], 1, "Pulumi.ci.yaml columnStoreReplicasPerShard 1");
        assert.equal(ordinals["workflow/workflow-worker"], undefined, "autoscaled: its claims are not patched");
        assert.deepEqual(Object.keys(ordinals).sort(), Object.keys(first.outputs[CLAIM_SIZES_OUTPUT] as object).filter((k) => k !== "workflow/workflow-worker").sort());
    });

    it("more replicas and a bigger volume in one change: only the claims that exist are read (the new replicas' claims are made with the new size), no unhandled rejection", async () => {
        const last = { [CLAIM_SIZES_OUTPUT]: { ...(first.outputs[CLAIM_SIZES_OUTPUT] as object), "column-store/column-store-shard-0": "data=2Gi" }, [CLAIM_ORDINALS_OUTPUT]: first.outputs[CLAIM_ORDINALS_OUTPUT] };
        // Only claim 0 exists (its StorageClass allows expansion): a read of claim 1 or 2 would fail the run.
        const cluster = { "kubernetes:core/v1:PersistentVolumeClaim column-store/data-column-store-shard-0-0": { spec: { storageClassName: "standard" } }, [CLASS("standard")]: { provisioner: "x", allowVolumeExpansion: true } };
        const r = await run(last, cluster, { columnStoreReplicasPerShard: 3, columnStoreKeeperReplicas: 1 });
        assert.deepEqual(r.errors, []);
        assert.equal(setOf(r, "column-store-shard-0").spec.volumeClaimTemplates[0].spec.resources.requests.storage, "5Gi");
        assert.equal((r.outputs[CLAIM_ORDINALS_OUTPUT] as Record<string, number>)["column-store/column-store-shard-0"], 3);
    });

    it("a last deploy without the claims output (an older program): the StatefulSet's own replica count tells which claims exist", async () => {
        const last = { [CLAIM_SIZES_OUTPUT]: { ...(first.outputs[CLAIM_SIZES_OUTPUT] as object), "column-store/column-store-shard-0": "data=2Gi" } };
        const cluster = {
            "kubernetes:apps/v1:StatefulSet column-store/column-store-shard-0": { spec: { replicas: 1 } },
            "kubernetes:core/v1:PersistentVolumeClaim column-store/data-column-store-shard-0-0": { spec: {} },
        };
        const r = await run(last, cluster, { columnStoreReplicasPerShard: 3, columnStoreKeeperReplicas: 1 });
        assert.deepEqual(refusalsOf(r), ["refused before anything changes: ops:columnStoreDataVolumeSize 2Gi -> 5Gi would expand claim column-store/data-column-store-shard-0-0 of StatefulSet column-store/column-store-shard-0, but it has no StorageClass (a claim without one cannot be expanded), so the API server refuses its expansion; set ops:columnStoreDataVolumeSize back to 2Gi"]);
    });

    it("fewer replicas after more: the claims of the earlier replicas still exist and are judged when they are patched again", async () => {
        const last = { [CLAIM_SIZES_OUTPUT]: { ...(first.outputs[CLAIM_SIZES_OUTPUT] as object), "column-store/column-store-shard-0": "data=2Gi" }, [CLAIM_ORDINALS_OUTPUT]: { "column-store/column-store-shard-0": 3 } };
        const cluster: Record<string, Record<string, unknown>> = { [CLASS("slow")]: { provisioner: "x" } };
        for (const i of [0, 1, 2]) cluster[`kubernetes:core/v1:PersistentVolumeClaim column-store/data-column-store-shard-0-${i}`] = { spec: { storageClassName: "slow" } };
        const r = await run(last, cluster, { columnStoreReplicasPerShard: 3, columnStoreKeeperReplicas: 1 });
        assert.equal(refusalsOf(r).length, 3, r.errors.join("\n"));
        const kept = await run(last, cluster, { columnStoreReplicasPerShard: 1 });
        assert.equal(refusalsOf(kept).length, 1, "one replica now: only its claim is patched");
        assert.equal((kept.outputs[CLAIM_ORDINALS_OUTPUT] as Record<string, number> | undefined)?.["column-store/column-store-shard-0"], undefined, "a refused run records nothing");
    });

    it("the same size written another way (5Gi -> 5368709120): the deployed spelling is kept, nothing changes and nothing is read (the cluster is empty)", async () => {
        const r = await run({ [CLAIM_SIZES_OUTPUT]: first.outputs[CLAIM_SIZES_OUTPUT], [CLAIM_ORDINALS_OUTPUT]: first.outputs[CLAIM_ORDINALS_OUTPUT] }, {}, { postgresVolumeSize: "5368709120", redisVolumeSize: "1073741824" });
        assert.deepEqual(r.errors, []);
        assert.deepEqual(postgresSizes(r), ["5Gi", "data=5Gi", "data=5Gi", "5Gi"]);
        assert.equal(setOf(r, "redis").metadata.annotations[CLAIM_SIZES_ANNOTATION], (first.outputs[CLAIM_SIZES_OUTPUT] as Record<string, string>)["data/redis"]);
        assert.deepEqual(r.outputs[CLAIM_SIZES_OUTPUT], first.outputs[CLAIM_SIZES_OUTPUT]);
        // A real growth spelled in bytes is still a growth.
        const grown = await run({ [CLAIM_SIZES_OUTPUT]: first.outputs[CLAIM_SIZES_OUTPUT], [CLAIM_ORDINALS_OUTPUT]: first.outputs[CLAIM_ORDINALS_OUTPUT] }, { [PVC]: { spec: {} } }, { postgresVolumeSize: "5368709121" });
        assert.match(refusalsOf(grown)[0], /ops:postgresVolumeSize 5Gi -> 5368709121 would expand claim data\/data-postgres-0/);
    });

    it("the data stores moved to another namespace: refused (the old namespace goes with their claims), naming the key and the way back; released, it goes through", async () => {
        const last = { [CLAIM_SIZES_OUTPUT]: first.outputs[CLAIM_SIZES_OUTPUT], [CLAIM_ORDINALS_OUTPUT]: first.outputs[CLAIM_ORDINALS_OUTPUT] };
        const r = await run(last, {}, { dataStoresNamespace: "data2" });
        const said = refusalsOf(r);
        assert.deepEqual(said.map((s) => /StatefulSet (\S+) of the last deploy/.exec(s)?.[1]), ["data/object-store", "data/postgres", "data/redis"]);
        assert.equal(
            said[1],
            'refused before anything changes: StatefulSet data/postgres of the last deploy would move to data2/postgres (ops:dataStoresNamespace data -> data2), where it starts with empty volumes: its claims data-postgres-0 would be deleted with the namespace data, which the stack no longer declares; to let its data go, back it up first (docs/backups.md), then add "data/postgres" to ops:volumesReleased for this run; or set ops:dataStoresNamespace back to data',
        );
        const released = await run(last, {}, { dataStoresNamespace: "data2", volumesReleased: ["data/postgres", "data/redis", "data/object-store"] });
        assert.deepEqual(released.errors, []);
        assert.ok((released.outputs[CLAIM_SIZES_OUTPUT] as Record<string, string>)["data2/postgres"]);
    });

    it("a StatefulSet no longer declared in a namespace the stack keeps (a shard fewer): refused, its claims named as left unused", async () => {
        const two = await run({}, {}, { columnStoreShards: 2 });
        assert.deepEqual(two.errors, []);
        const r = await run({ [CLAIM_SIZES_OUTPUT]: two.outputs[CLAIM_SIZES_OUTPUT], [CLAIM_ORDINALS_OUTPUT]: two.outputs[CLAIM_ORDINALS_OUTPUT] }, {});
        assert.deepEqual(refusalsOf(r), [
            'refused before anything changes: StatefulSet column-store/column-store-shard-1 of the last deploy is no longer declared: its claims data-column-store-shard-1-0 stay in column-store, unused; to let its data go, back it up first (docs/backups.md), then add "column-store/column-store-shard-1" to ops:volumesReleased for this run',
        ]);
    });
});
