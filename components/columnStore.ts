/**
 * The column store (sections 4.6, 5.6, 8.2): <shards> StatefulSets of <replicasPerShard> servers
 * (one StatefulSet per shard, so each pod's macros are its shard index and its own name), a
 * coordination ensemble (keeper StatefulSet) when shards are replicated, the cluster topology
 * generated from config, and the HTTP and native ports published as node ports.
 *
 * The admin password lives only in the Secret (key `password`): the XML names the environment
 * variable (`from_env`), never the value.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { disruptionBudget } from "./lib/availability";
import { appLabels, AppLabels } from "./lib/labels";
import { allowOnly, Peer, podsIn } from "./lib/network";
import { hardenedContainer, httpProbe, PodArgs, scratch, tcpProbe } from "./lib/pod";
import { withoutSettlingWait } from "./lib/engineOrder";
import { keyOf } from "../config/schema";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload } from "./lib/statefulService";

export interface ColumnStoreArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
}

const APP = "column-store";
/** uid/gid of the clickhouse user in the server and keeper images. */
const IMAGE_UID = 101;
const PASSWORD_ENV = "CLICKHOUSE_ADMIN_PASSWORD";
const INTERSERVER_PASSWORD_ENV = "CLICKHOUSE_INTERSERVER_PASSWORD";

export interface Topology {
    /** shards[i][j]: the FQDN of replica j of shard i. */
    shards: string[][];
    keepers: string[];
}

/** The servers of every shard (the headless Service's selector; app.kubernetes.io/instance is each shard's). */
const SERVER_PODS = { "app.kubernetes.io/name": APP, "app.kubernetes.io/component": "server" };
const SECRET_NAME = `${APP}-auth`;

export const shardName = (i: number) => `${APP}-shard-${i}`;
export const keeperName = `${APP}-keeper`;
export const headlessName = `${APP}-headless`;
export const keeperHeadlessName = `${keeperName}-headless`;

/** Stable per-pod DNS names: <statefulset>-<ordinal>.<headless>.<namespace>.svc.cluster.local (section 2.2). */
export function topology(cfg: StackConfig): Topology {
    const c = cfg.columnStore;
    const fqdn = (sts: string, i: number, svc: string) => `${sts}-${i}.${svc}.${c.namespace}.svc.cluster.local`;
    return {
        shards: Array.from({ length: c.shards }, (_, s) => Array.from({ length: c.replicasPerShard }, (_, r) => fqdn(shardName(s), r, headlessName))),
        keepers: Array.from({ length: c.keeperReplicas }, (_, k) => fqdn(keeperName, k, keeperHeadlessName)),
    };
}

const indent = (xml: string, n: number) => xml.split("\n").map((l) => " ".repeat(n) + l).join("\n");

/** config.d/cluster.xml: ports, macros (from env per pod), remote_servers and keeper nodes. */
export function serverConfigXml(cfg: StackConfig): string {
    const c = cfg.columnStore;
    const t = topology(cfg);
    const shards = t.shards.map((replicas) => [
        "<shard>",
        "    <internal_replication>true</internal_replication>",
        ...replicas.map((host) => indent([
            "<replica>",
            `    <host>${host}</host>`,
            `    <port>${c.nativePort}</port>`,
            `    <user>${c.user}</user>`,
            `    <password from_env="${PASSWORD_ENV}"/>`,
            "</replica>",
        ].join("\n"), 4)),
        "</shard>",
    ].join("\n"));
    const keeper = t.keepers.length === 0 ? [] : [
        "<zookeeper>",
        ...t.keepers.map((host) => `    <node><host>${host}</host><port>${c.keeper.clientPort}</port></node>`),
        "</zookeeper>",
        "<distributed_ddl>",
        "    <path>/clickhouse/task_queue/ddl</path>",
        "</distributed_ddl>",
    ];
    return [
        "<clickhouse>",
        "    <listen_host>0.0.0.0</listen_host>",
        `    <http_port>${c.httpPort}</http_port>`,
        `    <tcp_port>${c.nativePort}</tcp_port>`,
        `    <interserver_http_port>${c.interserverPort}</interserver_http_port>`,
        '    <interserver_http_host from_env="CH_INTERSERVER_HOST"/>',
        "    <interserver_http_credentials>",
        "        <user>interserver</user>",
        `        <password from_env="${INTERSERVER_PASSWORD_ENV}"/>`,
        "    </interserver_http_credentials>",
        // The stock config.xml also logs to files under /var/log/clickhouse-server (size 1000M, count
        // 10, and as much again for the error log), far above the pod's emptyDir: stdout only.
        "    <logger>",
        "        <level>information</level>",
        "        <console>1</console>",
        '        <log remove="remove"/>',
        '        <errorlog remove="remove"/>',
        "    </logger>",
        // The stock MySQL (9004) and PostgreSQL (9005) protocol listeners: nothing here uses them.
        '    <mysql_port remove="remove"/>',
        '    <postgresql_port remove="remove"/>',
        "    <macros>",
        `        <cluster>${c.clusterName}</cluster>`,
        '        <shard from_env="CH_SHARD"/>',
        '        <replica from_env="CH_REPLICA"/>',
        "    </macros>",
        "    <remote_servers>",
        `        <${c.clusterName}>`,
        indent(shards.join("\n"), 12),
        `        </${c.clusterName}>`,
        "    </remote_servers>",
        ...keeper.map((l) => "    " + l),
        "</clickhouse>",
        "",
    ].join("\n");
}

/** users.d/users.xml: the admin user with its password from the environment; no passwordless default user. */
export function usersXml(cfg: StackConfig): string {
    const c = cfg.columnStore;
    return [
        "<clickhouse>",
        "    <users>",
        '        <default remove="remove"/>',
        `        <${c.user}>`,
        `            <password from_env="${PASSWORD_ENV}"/>`,
        "            <networks><ip>::/0</ip></networks>",
        "            <profile>default</profile>",
        "            <quota>default</quota>",
        "            <access_management>1</access_management>",
        `        </${c.user}>`,
        "    </users>",
        "</clickhouse>",
        "",
    ].join("\n");
}

/** The keeper's whole configuration; each member's server_id (ordinal + 1) comes from the environment. */
export function keeperConfigXml(cfg: StackConfig): string {
    const c = cfg.columnStore;
    const t = topology(cfg);
    return [
        "<clickhouse>",
        "    <listen_host>0.0.0.0</listen_host>",
        "    <path>/var/lib/clickhouse-keeper</path>",
        "    <logger>",
        "        <level>information</level>",
        "        <console>1</console>",
        "    </logger>",
        "    <keeper_server>",
        `        <tcp_port>${c.keeper.clientPort}</tcp_port>`,
        '        <server_id from_env="KEEPER_SERVER_ID"/>',
        "        <log_storage_path>/var/lib/clickhouse-keeper/log</log_storage_path>",
        "        <snapshot_storage_path>/var/lib/clickhouse-keeper/snapshots</snapshot_storage_path>",
        "        <raft_configuration>",
        ...t.keepers.map((host, i) => `            <server><id>${i + 1}</id><hostname>${host}</hostname><port>${c.keeper.raftPort}</port></server>`),
        "        </raft_configuration>",
        "    </keeper_server>",
        "</clickhouse>",
        "",
    ].join("\n");
}

export class ColumnStore extends pulumi.ComponentResource {
    public readonly passwordSecretName: string;
    public readonly nodePorts: { http: number; native: number };

    constructor(name: string, args: ColumnStoreArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:ColumnStore", name, {}, opts);
        const cfg = args.config;
        const c = cfg.columnStore;
        const ns = c.namespace;
        const child = { parent: this };
        const server = appLabels(cfg, { name: APP, component: "server", instance: APP });
        const keeper = appLabels(cfg, { name: APP, component: "keeper", instance: keeperName });

        const password = c.password ?? new random.RandomPassword(`${name}-password`, { length: c.passwordLength, special: false }, child).result;
        const interserver = new random.RandomPassword(`${name}-interserver-password`, { length: c.passwordLength, special: false }, child);
        const auth = new k8s.core.v1.Secret(`${name}-auth`, {
            metadata: { name: SECRET_NAME, namespace: ns, labels: server.labels },
            type: "Opaque",
            stringData: { username: c.user, password, "interserver-password": interserver.result },
        }, child);
        const serverConfig = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${APP}-config`, namespace: ns, labels: server.labels },
            data: { "cluster.xml": serverConfigXml(cfg) },
        }, child);
        const users = new k8s.core.v1.ConfigMap(`${name}-users`, {
            metadata: { name: `${APP}-users`, namespace: ns, labels: server.labels },
            data: { "users.xml": usersXml(cfg) },
        }, child);
        const ports = [{ name: "http", port: c.httpPort }, { name: "native", port: c.nativePort }, { name: "interserver", port: c.interserverPort }];
        statefulServices(name, { name: APP, namespace: ns, labels: server.labels, selector: SERVER_PODS, ports, headlessOnly: true }, child);
        const keeperSet = c.keeperReplicas > 0 ? keeperEnsemble(`${name}-keeper`, cfg, keeper, args.volumeGuard, child) : undefined;

        for (let shard = 0; shard < c.shards; shard++) {
            const l = appLabels(cfg, { name: APP, component: "server", instance: shardName(shard) });
            statefulWorkload(`${name}-shard-${shard}`, cfg, {
                volumeGuard: args.volumeGuard, name: shardName(shard), namespace: ns, app: l, serviceName: headlessName, replicas: c.replicasPerShard, podManagementPolicy: "Parallel", rollingUpdate: true,
                reloadOn: { configMaps: [`${APP}-config`, `${APP}-users`], secrets: [SECRET_NAME] },
                pod: serverPod(cfg, shard, auth, serverConfig, users),
                data: { size: c.dataVolumeSize, sizeKey: keyOf(["columnStore", "dataVolumeSize"]), storageClass: c.storageClass },
            }, { ...child, dependsOn: [auth, serverConfig, users, ...(keeperSet ? [keeperSet] : [])] });
            // Each shard keeps all but one replica up.
            disruptionBudget(shardName(shard), { namespace: ns, labels: l.labels, selector: l.selector, replicas: c.replicasPerShard }, child);
        }
        nodePortService(name, cfg, server.labels, child);
        serverPolicy(cfg, server.labels, keeper.selector, child);

        this.passwordSecretName = SECRET_NAME;
        this.nodePorts = { http: c.httpNodePort, native: c.nativeNodePort };
        this.registerOutputs({ passwordSecretName: SECRET_NAME, nodePorts: this.nodePorts });
    }
}

/** One server of a shard: its macros (shard index, own name) and interserver host from the environment. */
function serverPod(cfg: StackConfig, shard: number, auth: k8s.core.v1.Secret, serverConfig: k8s.core.v1.ConfigMap, users: k8s.core.v1.ConfigMap): Omit<PodArgs, "spreadSelector"> {
    const c = cfg.columnStore;
    const logs = scratch("logs", "/var/log/clickhouse-server", "512Mi");
    const tmp = scratch("tmp", "/tmp", "1Gi");
    const container = hardenedContainer({
        name: "server",
        image: c.image,
        command: ["/usr/bin/clickhouse-server", "--config-file=/etc/clickhouse-server/config.xml"],
        env: [
            { name: "POD_NAME", valueFrom: { fieldRef: { fieldPath: "metadata.name" } } },
            { name: "CH_SHARD", value: String(shard) },
            { name: "CH_REPLICA", value: "$(POD_NAME)" },
            { name: "CH_INTERSERVER_HOST", value: `$(POD_NAME).${headlessName}.${c.namespace}.svc.cluster.local` },
            { name: PASSWORD_ENV, valueFrom: { secretKeyRef: { name: auth.metadata.name, key: "password" } } },
            { name: INTERSERVER_PASSWORD_ENV, valueFrom: { secretKeyRef: { name: auth.metadata.name, key: "interserver-password" } } },
        ],
        ports: [
            { name: "http", containerPort: c.httpPort },
            { name: "native", containerPort: c.nativePort },
            { name: "interserver", containerPort: c.interserverPort },
        ],
        resources: c,
        runAsUser: IMAGE_UID,
        startupProbe: httpProbe("/ping", "http", { period: 5, failureThreshold: 60 }),
        livenessProbe: httpProbe("/ping", "http", { period: 20, failureThreshold: 3 }),
        readinessProbe: httpProbe("/ping", "http", { period: 10 }),
        preStopDelay: c.preStopDelay,
        volumeMounts: [
            { name: "data", mountPath: "/var/lib/clickhouse" },
            { name: "config", mountPath: "/etc/clickhouse-server/config.d", readOnly: true },
            { name: "users", mountPath: "/etc/clickhouse-server/users.d", readOnly: true },
            logs.mount,
            tmp.mount,
        ],
    });
    return {
        terminationGracePeriodSeconds: c.terminationGracePeriod,
        fsGroup: IMAGE_UID,
        containers: [container],
        volumes: [
            { name: "config", configMap: { name: serverConfig.metadata.name, defaultMode: 0o444 } },
            { name: "users", configMap: { name: users.metadata.name, defaultMode: 0o444 } },
            logs.volume,
            tmp.volume,
        ],
    };
}

/** The HTTP and native ports on every node; Local keeps the client address so the policy's ipBlock rules apply. */
function nodePortService(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions): k8s.core.v1.Service {
    const c = cfg.columnStore;
    return new k8s.core.v1.Service(name, {
        metadata: withoutSettlingWait({ name: APP, namespace: c.namespace, labels }),
        spec: {
            type: "NodePort",
            externalTrafficPolicy: "Local",
            // Same pods as the headless service; part-of keeps the two selectors distinct.
            selector: { ...SERVER_PODS, "app.kubernetes.io/part-of": cfg.environment.partOf },
            ports: [
                { name: "http", port: c.httpPort, targetPort: "http", nodePort: c.httpNodePort, protocol: "TCP" },
                { name: "native", port: c.nativePort, targetPort: "native", nodePort: c.nativeNodePort, protocol: "TCP" },
            ],
        },
    }, opts);
}

/** The servers: node-port clients on HTTP and native, each other on native and interserver, the keepers. */
function serverPolicy(cfg: StackConfig, labels: Record<string, string>, keepers: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const c = cfg.columnStore;
    const ns = c.namespace;
    const clients: Peer = { description: "node-port clients", peers: c.clientCidrs.map((cidr) => ({ ipBlock: { cidr } })) };
    const replicas = podsIn(ns, SERVER_PODS, "the column store servers");
    allowOnly(APP, {
        namespace: ns,
        podSelector: SERVER_PODS,
        labels,
        ingress: [
            { peer: clients, ports: [{ port: c.httpPort }, { port: c.nativePort }] },
            { peer: replicas, ports: [{ port: c.nativePort }, { port: c.interserverPort }] },
        ],
        egress: [
            { peer: replicas, ports: [{ port: c.nativePort }, { port: c.interserverPort }] },
            ...(c.keeperReplicas > 0 ? [{ peer: podsIn(ns, keepers, "the keeper ensemble"), ports: [{ port: c.keeper.clientPort }] }] : []),
        ],
    }, opts);
}

/** The coordination ensemble: its config, headless Service, StatefulSet, disruption budget and policy. */
function keeperEnsemble(name: string, cfg: StackConfig, l: AppLabels, volumeGuard: ClaimGuard, opts: pulumi.CustomResourceOptions): k8s.apps.v1.StatefulSet {
    const c = cfg.columnStore;
    const ns = c.namespace;
    const config = new k8s.core.v1.ConfigMap(`${name}-config`, {
        metadata: { name: `${keeperName}-config`, namespace: ns, labels: l.labels },
        data: { "keeper_config.xml": keeperConfigXml(cfg) },
    }, opts);
    // Members must resolve each other to form the first quorum: statefulServices publishes them before they are ready.
    const ports = [{ name: "client", port: c.keeper.clientPort }, { name: "raft", port: c.keeper.raftPort }];
    statefulServices(name, { name: keeperName, namespace: ns, labels: l.labels, selector: l.selector, ports, headlessOnly: true }, opts);
    const work = scratch("work", "/var/lib/clickhouse", "64Mi");
    const tmp = scratch("tmp", "/tmp", "256Mi");
    const set = statefulWorkload(name, cfg, {
        volumeGuard, name: keeperName, namespace: ns, app: l, serviceName: keeperHeadlessName, replicas: c.keeperReplicas, podManagementPolicy: "Parallel", rollingUpdate: true,
        reloadOn: { configMaps: [`${keeperName}-config`] },
        pod: {
            terminationGracePeriodSeconds: c.terminationGracePeriod,
            fsGroup: IMAGE_UID,
            containers: [hardenedContainer({
                name: "keeper",
                image: c.keeperImage,
                // server_id = ordinal + 1, from the pod name <keeper>-<ordinal>.
                command: ["sh", "-c", 'export KEEPER_SERVER_ID=$(( ${HOSTNAME##*-} + 1 )); exec clickhouse-keeper --config-file=/etc/clickhouse-keeper/keeper_config.xml'],
                ports: [{ name: "client", containerPort: c.keeper.clientPort }, { name: "raft", containerPort: c.keeper.raftPort }],
                resources: c.keeper,
                runAsUser: IMAGE_UID,
                startupProbe: tcpProbe("client", { period: 5, failureThreshold: 60 }),
                livenessProbe: tcpProbe("client", { period: 20, failureThreshold: 3 }),
                readinessProbe: tcpProbe("client", { period: 10 }),
                preStopDelay: c.preStopDelay,
                volumeMounts: [
                    { name: "data", mountPath: "/var/lib/clickhouse-keeper" },
                    { name: "config", mountPath: "/etc/clickhouse-keeper", readOnly: true },
                    work.mount,
                    tmp.mount,
                ],
            })],
            volumes: [{ name: "config", configMap: { name: config.metadata.name, defaultMode: 0o444 } }, work.volume, tmp.volume],
        },
        data: { size: c.keeper.volumeSize, sizeKey: keyOf(["columnStore", "keeper", "volumeSize"]), storageClass: c.storageClass },
    }, { ...opts, dependsOn: [config] });
    disruptionBudget(keeperName, { namespace: ns, labels: l.labels, selector: l.selector, replicas: c.keeperReplicas }, opts);
    const members = podsIn(ns, l.selector, "the other keeper members");
    allowOnly(keeperName, {
        namespace: ns,
        podSelector: l.selector,
        labels: l.labels,
        ingress: [
            { peer: podsIn(ns, SERVER_PODS, "the column store servers"), ports: [{ port: c.keeper.clientPort }] },
            { peer: members, ports: [{ port: c.keeper.raftPort }] },
        ],
        egress: [{ peer: members, ports: [{ port: c.keeper.raftPort }] }],
    }, opts);
    return set;
}
