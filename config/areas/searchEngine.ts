import {
    bool, cpu, cronWithSeconds, image, int, list, memory, mountPath, oneOf, optional, patterned, port, replicas, secret, seconds, storage, str, url, namespaceName, hostLabel, storageClassName, subdomainName,
} from "../schema";

const heap = patterned(/^\d+[mg]$/, 'a JVM heap size such as "512m" or "2g"');

/**
 * The search engine (sections 2.10, 4.5, 5.5, 8.1): a StatefulSet behind a headless service,
 * security on with a generated password for `elastic`, a snapshot repository (fs or s3), the
 * backup role and the nightly snapshot lifecycle policy created by a bootstrap Job.
 */
export const searchEngine = {
    namespace: namespaceName("the namespace of the search engine", "search"),
    image: image("the search engine image", "docker.elastic.co/elasticsearch/elasticsearch:8.15.3"),
    name: str("the StatefulSet name; pods are <name>-<ordinal>.<name>-headless.<namespace>.svc.cluster.local", "search", { pattern: /^[a-z]([a-z0-9-]{0,29}[a-z0-9])?$/, expected: "a short DNS label (at most 31 lower-case letters, digits and '-', starting with a letter, not ending with '-')" }),
    clusterName: str("cluster.name of the search engine", "ops-search"),
    replicas: replicas("search engine nodes (every node is master-eligible and holds data)", 1, 9),
    httpPort: port("the search engine's HTTP port", 9200),
    transportPort: port("the search engine's transport port between its nodes", 9300),
    host: hostLabel("first label of the search engine's public host (<label>.<domain>)", "search"),
    heap: heap("JVM heap (ES_JAVA_OPTS -Xms<heap> -Xmx<heap>; section 8.1: 2g); at most half the memory limit", "2g"),
    requests: { cpu: cpu("search engine cpu request", "1"), memory: memory("search engine memory request", "4096Mi") },
    limits: { cpu: cpu("search engine cpu limit (section 8.1: 4)", "4"), memory: memory("search engine memory limit (section 8.1: 4096Mi)", "4096Mi") },
    dataVolumeSize: storage("size of each node's data volume", "30Gi"),
    storageClass: optional(storageClassName("storage class of the data volumes (the cluster default when unset)")),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the search engine pods (a node flushes before it stops)", 120),
    preStopDelay: seconds("seconds the search engine's preStop hook waits so the address leaves the endpoints first", 5, 60),
    allowMmap: bool("node.store.allow_mmap: true needs vm.max_map_count >= 262144 on every node (set by the node image, never by a privileged container here); false runs on any node at some speed cost", false),
    security: {
        enabled: bool("xpack security: basic authentication as `elastic` with a generated password, TLS between nodes (section 5.5); false runs without authentication", true),
        passwordLength: int("length of the generated password of the built-in superuser elastic (alphanumeric)", 24, { min: 16, max: 128 }),
        certValidityHours: int("validity of the generated transport CA and node certificate, in hours", 87600, { min: 24, max: 876000 }),
    },
    snapshot: {
        repository: str("the snapshot repository name (PUT /_snapshot/<repo>)", "backups", { pattern: /^[a-z0-9][a-z0-9_-]*$/, expected: "a lower-case repository name" }),
        type: oneOf("the snapshot repository type (section 2.10): fs (a volume at path.repo) or s3 (the object store)", ["fs", "s3"] as const, "fs"),
        fsLocation: mountPath("path.repo and the fs repository's settings.location (they must be equal, section 2.10)", "/usr/share/elasticsearch/snapshots"),
        fsVolumeSize: storage("size of the fs snapshot volume", "50Gi"),
        fsAccessMode: oneOf("access mode of the fs snapshot volume; with more than one node every node must see the same location, so ReadWriteMany", ["ReadWriteOnce", "ReadWriteMany"] as const, "ReadWriteOnce"),
        fsStorageClass: optional(storageClassName("storage class of the fs snapshot volume (an RWX-capable class when fsAccessMode is ReadWriteMany)")),
        s3: {
            endpoint: url("the S3-compatible object store endpoint (settings.endpoint; in-cluster service URL of the object store)", "http://object-store.data.svc.cluster.local:9000"),
            bucket: str("the object store bucket of the snapshots", "search-snapshots", { pattern: /^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/, expected: "an S3 bucket name" }),
            client: str("the s3 client name (settings.client; keystore keys s3.client.<client>.*)", "default", { pattern: /^[a-z0-9_-]+$/, expected: "a lower-case client name" }),
            pathStyle: bool("path-style access (needed by most S3-compatible stores)", true),
            credentialsSecret: subdomainName("the Secret (keys access-key, secret-key) with the object store credentials; created from the two secret keys below when they are set, otherwise created on the cluster beforehand", "search-snapshot-s3"),
            accessKey: optional(secret("the object store access key (enters the node keystore as s3.client.<client>.access_key)", { expected: "a non-empty access key", placeholder: "RENDERPLACEHOLDERKEY0" })),
            secretKey: optional(secret("the object store secret key (enters the node keystore as s3.client.<client>.secret_key)", { expected: "a non-empty secret key", placeholder: "render-placeholder-secret-key-0000000000" })),
        },
        role: {
            name: str("the backup role created by the bootstrap (POST /_security/role/<role>)", "slm-admin", { pattern: /^[\w.-]+$/, expected: "a role name" }),
            cluster: list("cluster privileges of the backup role", ["manage_slm", "cluster:admin/snapshot/*"]),
            indexNames: list("indices[].names of the backup role", [".slm-history-*"]),
            indexPrivileges: list("indices[].privileges of the backup role", ["all"]),
        },
        policy: {
            id: str("the snapshot lifecycle policy id (PUT /_slm/policy/<id>)", "nightly-snapshots", { pattern: /^[a-z0-9][a-z0-9_-]*$/, expected: "a lower-case policy id" }),
            schedule: cronWithSeconds("lifecycle policy schedule, cron with seconds first", "0 30 1 * * ?"),
            name: str("date-math snapshot name of the lifecycle policy", "<nightly-snap-{now/d}>", { pattern: /^<[a-z0-9_.{}\/+-]+>$|^[a-z0-9_.-]+$/, expected: 'a lower-case snapshot name or date-math pattern such as "<nightly-snap-{now/d}>"' }),
            indices: list("config.indices of the lifecycle policy", ["*"]),
            includeGlobalState: bool("config.include_global_state of the lifecycle policy", true),
            expireAfter: str("retention.expire_after (section 8.1: 30d)", "30d", { pattern: /^\d+(d|h|m|s)$/, expected: 'a duration such as "30d"' }),
            minCount: int("retention.min_count (section 8.1: 5)", 5, { min: 1, max: 10000 }),
            maxCount: int("retention.max_count (section 8.1: 50)", 50, { min: 1, max: 10000 }),
        },
    },
    jobs: {
        image: image("image with sh and curl for the bootstrap, on-demand snapshot and restore jobs", "docker.io/curlimages/curl:8.11.0"),
        backoffLimit: int("backoffLimit of the bootstrap Job", 6, { min: 0, max: 20 }),
        activeDeadline: seconds("activeDeadlineSeconds of the bootstrap and snapshot Jobs", 1800, 86400),
        waitTimeout: seconds("how long a job waits for the search engine to answer before failing", 600, 3600),
        requests: { cpu: cpu("search job cpu request", "50m"), memory: memory("search job memory request", "64Mi") },
        limits: { cpu: cpu("search job cpu limit", "200m"), memory: memory("search job memory limit", "128Mi") },
    },
    init: {
        requests: { cpu: cpu("search engine init container cpu request", "100m"), memory: memory("search engine init container memory request", "256Mi") },
        limits: { cpu: cpu("search engine init container cpu limit", "1"), memory: memory("search engine init container memory limit", "512Mi") },
    },
};
