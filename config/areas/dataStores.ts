import {
    bool, cpu, image, int, list, memory, optional, port, seconds, storage, str, namespaceName, storageClassName,
} from "../schema";

const probeTiming = (what: string, initialDelay: number, period: number) => ({
    initialDelay: seconds(`${what} probe initial delay`, initialDelay),
    period: seconds(`${what} probe period`, period),
    timeout: seconds(`${what} probe timeout`, 5, 60),
    failureThreshold: int(`${what} probe failure threshold`, 6, { min: 1, max: 100 }),
});

const BUCKET = /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/;

/** Where the data stores live; one namespace for the three of them. */
export const dataStores = {
    namespace: namespaceName("the namespace of PostgreSQL, Redis and the object store", "data"),
    storageClass: optional(storageClassName("storage class of the data store volumes (the cluster default when unset)")),
    preStopDelay: seconds("seconds the preStop hook of Redis and the object store waits so the address leaves the endpoints first", 5, 60),
};

/** PostgreSQL 15 (relational database of the workflow tool; backups section 8.3). */
export const postgres = {
    image: image("the PostgreSQL 15 server image", "docker.io/library/postgres:15.10"),
    port: port("the PostgreSQL port", 5432),
    superuser: str("the superuser name (its password is generated)", "postgres"),
    passwordLength: int("length of generated PostgreSQL passwords (alphanumeric)", 32, { min: 16, max: 128 }),
    volumeSize: storage("the PostgreSQL data volume", "50Gi"),
    requests: { cpu: cpu("PostgreSQL cpu request", "1"), memory: memory("PostgreSQL memory request", "2Gi") },
    limits: { cpu: cpu("PostgreSQL cpu limit", "1"), memory: memory("PostgreSQL memory limit", "2Gi") },
    sharedMemorySize: memory("size of the in-memory /dev/shm of the PostgreSQL pod", "256Mi"),
    liveness: probeTiming("PostgreSQL liveness", 30, 10),
    readiness: probeTiming("PostgreSQL readiness", 5, 10),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the PostgreSQL pod (room for a fast shutdown and checkpoint)", 60),
};

/** Redis 7 with persistence (the workflow tool's queue; backups section 8.3). */
export const redis = {
    image: image("the Redis 7 server image", "docker.io/library/redis:7.2.6"),
    port: port("the Redis port", 6379),
    passwordLength: int("length of the generated Redis password (alphanumeric)", 32, { min: 16, max: 128 }),
    volumeSize: storage("the Redis data volume (section 8.2: 10Gi)", "10Gi"),
    appendOnly: bool("AOF persistence (appendonly yes) besides RDB snapshots", true),
    appendFsync: str("appendfsync policy", "everysec", { oneOf: ["always", "everysec", "no"] }),
    rdbSavePoints: str("RDB save points: pairs of <seconds> <changes>", "900 1 300 10 60 10000", { pattern: /^\d+ \d+( \d+ \d+)*$/, expected: 'pairs "<seconds> <changes>", e.g. "900 1 300 10"' }),
    maxMemory: memory("Redis maxmemory (below the memory limit; the queue needs noeviction)", "768Mi"),
    requests: { cpu: cpu("Redis cpu request", "500m"), memory: memory("Redis memory request", "1Gi") },
    limits: { cpu: cpu("Redis cpu limit", "500m"), memory: memory("Redis memory limit", "1Gi") },
    liveness: probeTiming("Redis liveness", 15, 10),
    readiness: probeTiming("Redis readiness", 5, 10),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the Redis pod (room for the final save)", 60),
};

/** The S3-compatible object store (MinIO; search engine snapshots; backups section 8.3). */
export const objectStore = {
    image: image("the S3-compatible object store (MinIO) server image", "docker.io/minio/minio:RELEASE.2024-11-07T00-52-20Z"),
    port: port("the S3 API port", 9000),
    rootUser: str("the root user name (its password is generated)", "admin"),
    passwordLength: int("length of generated object store secrets (alphanumeric)", 40, { min: 16, max: 128 }),
    volumeSize: storage("the object store data volume", "100Gi"),
    buckets: list("buckets created by the provisioning job (the search engine's snapshot bucket, searchEngineSnapshotS3Bucket, is always added); the backup mirrors every bucket", ["search-snapshots"], str("a bucket name", undefined, { pattern: BUCKET, expected: "an S3 bucket name" })),
    requests: { cpu: cpu("object store cpu request", "500m"), memory: memory("object store memory request", "1Gi") },
    limits: { cpu: cpu("object store cpu limit", "500m"), memory: memory("object store memory limit", "1Gi") },
    liveness: probeTiming("object store liveness", 15, 20),
    readiness: probeTiming("object store readiness", 5, 10),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the object store pod", 30),
};
