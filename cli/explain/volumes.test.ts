/**
 * Issue 42 class 4: what `npm run explain` and `npm run diff` say of data volumes beyond a size
 * change of a StatefulSet that stays where it is: the same size written another way, a StatefulSet
 * that moves to another namespace or goes, and the stack's own claims (shrink, growth, a new class,
 * access mode or namespace, a removal).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { CLAIM_SIZES_ANNOTATION, CLAIM_SIZE_KEYS_ANNOTATION, ORPHAN_ANNOTATION } from "../../components/lib/claimAnnotations";
import { volumeChanges, volumes } from "./volumes";
import { workloadsOf } from "./workloads";

const ns = (name: string): K8sObject => ({ apiVersion: "v1", kind: "Namespace", metadata: { name } });
const sts = (namespace: string, size: string): K8sObject => ({
    apiVersion: "apps/v1",
    kind: "StatefulSet",
    metadata: { name: "postgres", namespace, annotations: { [ORPHAN_ANNOTATION]: "orphan", [CLAIM_SIZES_ANNOTATION]: `data=${size}`, [CLAIM_SIZE_KEYS_ANNOTATION]: "data=postgresVolumeSize" } },
    spec: { replicas: 1, template: { spec: { containers: [] } }, volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: size } } } }] },
});
const pvc = (namespace: string, size: string, storageClassName?: string, accessModes = ["ReadWriteOnce"]): K8sObject => ({
    apiVersion: "v1",
    kind: "PersistentVolumeClaim",
    metadata: { name: "booking-data", namespace },
    spec: { accessModes, ...(storageClassName ? { storageClassName } : {}), resources: { requests: { storage: size } } },
});
const changes = (base: K8sObject[], head: K8sObject[]) => volumeChanges(volumes(base, workloadsOf(base)), volumes(head, workloadsOf(head)));

describe("issue 42 class 4: the diff's data volumes", () => {
    it("a StatefulSet's size written another way but equal is no growth: nothing changes", () => {
        const c = changes([ns("data"), sts("data", "5Gi")], [ns("data"), sts("data", "5368709120")]);
        assert.deepEqual(c.map((x) => [x.refused, x.text]), [[false, "no change: data/postgres: volume data 5Gi → 5368709120 (config key postgresVolumeSize): the same size written another way: the program keeps the deployed spelling (components/lib/claimGuard.ts), so nothing changes"]]);
    });

    it("the data stores moved to another namespace: refused, the old namespace going with the claims", () => {
        const c = changes([ns("data"), sts("data", "5Gi")], [ns("data2"), sts("data2", "5Gi")]);
        assert.deepEqual(c.map((x) => [x.refused, x.text]), [[true, "refused: data/postgres: moves to data2/postgres, where it starts with empty volumes: its claims (data-postgres-0) would be deleted with the namespace data, which the stack no longer declares; the program refuses it in the preview unless volumesReleased lists data/postgres (after a backup)"]]);
        const kept = changes([ns("data"), ns("data2"), sts("data", "5Gi")], [ns("data"), ns("data2"), sts("data2", "5Gi")]);
        assert.match(kept[0].text, /its claims \(data-postgres-0\) stay in data, unused/);
        assert.match(changes([ns("data"), sts("data", "5Gi")], [ns("data")])[0].text, /^refused: data\/postgres: is no longer declared: /);
    });

    it("a plain claim: a shrink is refused by the API server, a growth expands in place, the same size is no change", () => {
        assert.deepEqual(changes([pvc("booking", "2Gi")], [pvc("booking", "1Gi")]).map((x) => [x.refused, x.text]), [[true, "refused: claim booking/booking-data: 2Gi → 1Gi: a claim cannot shrink; the API server refuses it in the preview (spec.resources.requests.storage: field can not be less than status.capacity)"]]);
        const grown = changes([pvc("booking", "1Gi")], [pvc("booking", "2Gi")]);
        assert.equal(grown[0].refused, false);
        assert.match(grown[0].text, /^claim booking\/booking-data: 1Gi → 2Gi: expanded in place where the cluster's default StorageClass allows volume expansion/);
        assert.deepEqual(changes([pvc("booking", "1Gi")], [pvc("booking", "1073741824")]).map((x) => x.refused), [false]);
        assert.deepEqual(changes([pvc("booking", "1Gi")], [pvc("booking", "1Gi")]), []);
    });

    it("a plain claim's new class, access mode or namespace, or its removal: the provider deletes it with its data", () => {
        for (const [head, what] of [[pvc("booking", "1Gi", "fast"), /the cluster's default StorageClass → StorageClass fast/], [pvc("booking", "1Gi", undefined, ["ReadWriteMany"]), /access modes ReadWriteOnce → ReadWriteMany/], [pvc("booking2", "1Gi"), /moves to booking2\/booking-data/]] as const) {
            const c = changes([pvc("booking", "1Gi")], [head]);
            assert.equal(c.length, 1);
            assert.equal(c[0].refused, true);
            assert.match(c[0].text, what);
            assert.match(c[0].text, /deletes the claim, and the data on it/);
        }
        assert.match(changes([pvc("booking", "1Gi")], [])[0].text, /^refused: claim booking\/booking-data is no longer declared: pulumi deletes it and the data on it/);
    });
});
