import {
    cpu, image, int, list, memory, nodePort, optional, ipv4Cidr, port, replicas, secret, seconds, storage, str, namespaceName, storageClassName,
} from "../schema";


/**
 * The column store (sections 4.6, 5.6, 8.2): shards x replicas of servers, a coordination
 * ensemble (keeper) when a shard has more than one replica, HTTP and native ports published
 * as node ports, user admin with a password from a Secret (key `password`).
 */
export const columnStore = {
    namespace: namespaceName("the namespace of the column store", "column-store"),
    image: image("the column store server image", "docker.io/clickhouse/clickhouse-server:24.8.4.13"),
    keeperImage: image("the coordination (keeper) image", "docker.io/clickhouse/clickhouse-keeper:24.8.4.13"),
    clusterName: str("the cluster name in remote_servers (ON CLUSTER <name>)", "ops", { pattern: /^[a-z][a-z0-9_]*$/, expected: "a lower-case identifier" }),
    shards: replicas("number of shards (section 8.2 example: 2)", 1, 16),
    replicasPerShard: replicas("replicas of each shard (section 8.2 example: 3)", 1, 9),
    keeperReplicas: int("members of the coordination ensemble (section 8.2 example: 3); 0 only with one replica per shard, otherwise an odd number", 0, { min: 0, max: 7 }),
    httpPort: port("the HTTP interface port (section 4.6: 8123)", 8123),
    nativePort: port("the native TCP port (section 4.6: 9000)", 9000),
    interserverPort: port("the interserver HTTP port replicas fetch parts from", 9009),
    httpNodePort: nodePort("the node port publishing the HTTP interface (section 8.2: 31567)", 31567),
    nativeNodePort: nodePort("the node port publishing the native protocol (section 8.2: 30900)", 30900),
    clientCidrs: list("client networks allowed to reach the node ports (NetworkPolicy ipBlock; the service keeps client addresses with externalTrafficPolicy Local)", ["10.0.0.0/8"], ipv4Cidr("an IPv4 CIDR")),
    user: str("the administrative user (section 5.6: admin)", "admin", { pattern: /^[a-z_][a-z0-9_]*$/, expected: "a lower-case user name" }),
    password: optional(secret("the admin password (secret key password); generated when unset", { expected: "a password of at least 16 characters", pattern: /^.{16,}$/, placeholder: "render-placeholder-column-store-00" })),
    passwordLength: int("length of the generated admin password (alphanumeric)", 24, { min: 16, max: 128 }),
    requests: { cpu: cpu("column store server cpu request", "500m"), memory: memory("column store server memory request", "1Gi") },
    limits: { cpu: cpu("column store server cpu limit", "2"), memory: memory("column store server memory limit", "4Gi") },
    dataVolumeSize: storage("size of each server's data volume", "20Gi"),
    storageClass: optional(storageClassName("storage class of the column store volumes (the cluster default when unset)")),
    terminationGracePeriod: seconds("terminationGracePeriodSeconds of the column store pods", 60),
    preStopDelay: seconds("seconds the column store preStop hook waits so the address leaves the endpoints first", 5, 60),
    keeper: {
        clientPort: port("the keeper client port", 9181),
        raftPort: port("the keeper raft port between ensemble members", 9234),
        requests: { cpu: cpu("keeper cpu request", "250m"), memory: memory("keeper memory request", "512Mi") },
        limits: { cpu: cpu("keeper cpu limit", "1"), memory: memory("keeper memory limit", "1Gi") },
        volumeSize: storage("size of each keeper's log and snapshot volume", "5Gi"),
    },
};
