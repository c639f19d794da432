/**
 * Cross-key rules of the booking application, the search engine and the column store.
 */
import type { Rule } from "./rule";
import { cpuMillis, quantityBytes } from "./schema";

const heapBytes = (heap: string) => Number(heap.slice(0, -1)) * (heap.endsWith("g") ? 2 ** 30 : 2 ** 20);

/** The JVM heap takes at most half the container's memory (the rest is off-heap and page cache; 2g of 4096Mi in section 8.1). */
const searchHeap: Rule = (c) => {
    const s = c.searchEngine;
    return heapBytes(s.heap) * 2 > quantityBytes(s.limits.memory)
        ? [{ key: "searchEngineHeap", problem: `${s.heap} is more than half of searchEngineLimitsMemory ${s.limits.memory}`, expected: "a heap of at most half the memory limit" }]
        : [];
};

/** Every node of an fs repository must see the same location (section 2.10: location = path.repo). */
const searchSharedRepository: Rule = (c) => {
    const s = c.searchEngine;
    return s.snapshot.type === "fs" && s.replicas > 1 && s.snapshot.fsAccessMode !== "ReadWriteMany"
        ? [{ key: "searchEngineSnapshotFsAccessMode", problem: `${s.replicas} nodes cannot share a ${s.snapshot.fsAccessMode} fs repository volume`, expected: "ReadWriteMany (with an RWX storage class), or searchEngineSnapshotType s3" }]
        : [];
};

const searchS3Keys: Rule = (c) => {
    const s3 = c.searchEngine.snapshot.s3;
    return (s3.accessKey === undefined) !== (s3.secretKey === undefined)
        ? [{ key: s3.accessKey === undefined ? "searchEngineSnapshotS3AccessKey" : "searchEngineSnapshotS3SecretKey", problem: "only one of the two object store keys is set", expected: "both searchEngineSnapshotS3AccessKey and searchEngineSnapshotS3SecretKey, or neither (the object store then generates them)" }]
        : [];
};

const searchRetention: Rule = (c) => {
    const p = c.searchEngine.snapshot.policy;
    return p.minCount > p.maxCount
        ? [{ key: "searchEngineSnapshotPolicyMinCount", problem: `${p.minCount} is above searchEngineSnapshotPolicyMaxCount ${p.maxCount}`, expected: "at most searchEngineSnapshotPolicyMaxCount" }]
        : [];
};

/** Replicated shards need the coordination ensemble; an ensemble keeps quorum only with an odd size. */
const columnStoreKeeper: Rule = (c) => {
    const s = c.columnStore;
    if (s.replicasPerShard > 1 && s.keeperReplicas === 0)
        return [{ key: "columnStoreKeeperReplicas", problem: `0 with ${s.replicasPerShard} replicas per shard (replication needs coordination)`, expected: "1, 3 or 5 members" }];
    if (s.keeperReplicas > 0 && s.keeperReplicas % 2 === 0)
        return [{ key: "columnStoreKeeperReplicas", problem: `${s.keeperReplicas} members tolerate no more failures than ${s.keeperReplicas - 1}`, expected: "an odd number of members (1, 3, 5, 7)" }];
    return [];
};

/** Section 2.1 Guaranteed QoS for the stateful sets in prod (every container, init ones too): requests equal limits. */
const guaranteedInProd: Rule = (c) => {
    if (c.environment.tier !== "prod") return [];
    const parts = { columnStore: c.columnStore, columnStoreKeeper: c.columnStore.keeper, searchEngine: c.searchEngine, searchEngineInit: c.searchEngine.init };
    return Object.entries(parts).flatMap(([key, r]) => [
        ...(cpuMillis(r.requests.cpu) !== cpuMillis(r.limits.cpu)
            ? [{ key: `${key}RequestsCpu`, problem: `${r.requests.cpu} differs from ${key}LimitsCpu ${r.limits.cpu} (prod stateful sets need Guaranteed QoS)`, expected: `the same value as ${key}LimitsCpu` }]
            : []),
        ...(quantityBytes(r.requests.memory) !== quantityBytes(r.limits.memory)
            ? [{ key: `${key}RequestsMemory`, problem: `${r.requests.memory} differs from ${key}LimitsMemory ${r.limits.memory} (prod stateful sets need Guaranteed QoS)`, expected: `the same value as ${key}LimitsMemory` }]
            : []),
    ]);
};

export const APPLICATION_RULES: Rule[] = [searchHeap, searchSharedRepository, searchS3Keys, searchRetention, columnStoreKeeper, guaranteedInProd];
