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
import { CLAIM_SIZES_OUTPUT } from "../components/lib/claimGuard";

const values = readStackValues("ci");
const run = (lastOutputs: Record<string, unknown>, cluster: Record<string, Record<string, unknown>> = {}): Promise<ProgramRun> => {
    mockDeployment.lastOutputs = lastOutputs;
    mockDeployment.cluster = cluster;
    return runProgram({ project: values.project, stack: "ci", config: values.config, secretKeys: values.secretKeys });
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
        const r = await run({ [CLAIM_SIZES_OUTPUT]: last }, cluster);
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
        const r = await run({ [CLAIM_SIZES_OUTPUT]: { "data/postgres": "data=2Gi", "data/redis": "data=lots" } }, { [PVC]: { spec: { storageClassName: "standard" } }, [CLASS("standard")]: { provisioner: "x", allowVolumeExpansion: true } });
        assert.equal(r.errors.length, 1);
        assert.match(r.errors[0], /^stack output volumeClaimSizes: refused before anything changes: the last deployed sizes of StatefulSet data\/redis \(stack output volumeClaimSizes\) could not be judged: /);
        assert.deepEqual(postgresSizes(r), ["5Gi", "data=5Gi", "data=5Gi", "5Gi"]);
    });
});
