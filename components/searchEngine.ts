/**
 * The search engine (sections 2.10, 4.5, 5.5, 8.1, 8.3): a StatefulSet behind a headless service
 * (stable names <name>-<ordinal>.<name>-headless.<namespace>.svc.cluster.local) and a client
 * service; security on with a generated password for `elastic` and TLS between nodes; a snapshot
 * repository (fs on a volume at path.repo, or s3 on the object store with its keys in the node
 * keystore); a bootstrap Job that creates the repository, verifies it, creates the backup role
 * and the lifecycle policy; an on-demand snapshot and a restore, each a suspended CronJob.
 *
 * vm.max_map_count: the image wants 262144 for mmap-backed stores. No privileged init container
 * sets it: node.store.allow_mmap is off by default (searchEngineAllowMmap) so the pods run on any
 * node; turn it on only where the node image sets the sysctl.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { keyOf } from "../config/schema";
import { disruptionBudget } from "./lib/availability";
import { hostOf, webIngress } from "./lib/ingress";
import { appLabels, AppLabels } from "./lib/labels";
import { allowOnly, Flow, internet, ingressController, namespace as inNamespace, podsIn } from "./lib/network";
import { execProbe, hardenedContainer, PodArgs, scratch, tcpProbe } from "./lib/pod";
import { protectedClaim } from "./lib/protectedClaim";
import type { ClaimGuard } from "./lib/claimGrowth";
import { statefulServices, statefulWorkload } from "./lib/statefulService";
import { CERTS, HOME, nodeSettings, prepareConfigScript, readinessScript, s3Endpoint } from "./searchEngine/nodeConfig";
import { snapshotClient } from "./searchEngine/snapshotClient";
import { transportCertificates } from "./searchEngine/transportTls";

type EnvVar = k8s.types.input.core.v1.EnvVar;

export interface SearchEngineArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
}

/** The uid and gid of the search engine image; its files under /usr/share/elasticsearch belong to them. */
const IMAGE_UID = 1000;
/** app.kubernetes.io/name of every object; the object store admits {name: search-engine, component: node}. */
export const APP = "search-engine";

export class SearchEngine extends pulumi.ComponentResource {
    public readonly url: string;
    public readonly serviceName: string;
    public readonly headlessServiceName: string;
    public readonly selector: Record<string, string>;
    public readonly passwordSecretName: string | undefined;
    public readonly bootstrapJobName: string;

    constructor(name: string, args: SearchEngineArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:SearchEngine", name, {}, opts);
        const cfg = args.config;
        const s = cfg.searchEngine;
        const ns = s.namespace;
        const child = { parent: this };
        const sts = s.name;
        const l = appLabels(cfg, { name: APP, component: "node", instance: sts });
        const jobs = appLabels(cfg, { name: APP, component: "snapshot-client", instance: `${sts}-snapshot-client` });

        const secrets = nodeSecrets(name, cfg, l.labels, child);
        const settings = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${sts}-config`, namespace: ns, labels: l.labels },
            data: { "elasticsearch.yml": nodeSettings(cfg, `${sts}-headless`) },
        }, child);
        const snapshots = snapshotVolume(name, cfg, l.labels, child);
        const ports = [{ name: "http", port: s.httpPort }, { name: "transport", port: s.transportPort }];
        const services = statefulServices(name, { name: sts, namespace: ns, labels: l.labels, selector: l.selector, ports, clientPorts: ["http"] }, child);
        statefulWorkload(name, cfg, {
            volumeGuard: args.volumeGuard, name: sts, namespace: ns, app: l, serviceName: services.headlessName, replicas: s.replicas,
            // Every master-eligible node must be up for the first election.
            podManagementPolicy: "Parallel", rollingUpdate: true,
            reloadOn: { configMaps: [`${sts}-config`], secrets: secrets.names },
            pod: nodePod(cfg, settings, secrets, snapshots),
            data: { size: s.dataVolumeSize, sizeKey: keyOf(["searchEngine", "dataVolumeSize"]), storageClass: s.storageClass },
        }, { ...child, dependsOn: [settings, ...(secrets.password ? [secrets.password] : [])] });
        webIngress(sts, cfg, { namespace: ns, hostLabel: s.host, serviceName: sts, servicePort: s.httpPort, labels: l.labels }, { ...child, dependsOn: [services.client!] });
        disruptionBudget(sts, { namespace: ns, labels: l.labels, selector: l.selector, replicas: s.replicas }, child);

        const url = `http://${sts}.${ns}.svc.cluster.local:${s.httpPort}`;
        const client = snapshotClient(name, cfg, { namespace: ns, sts, url, labels: jobs, nodes: l.selector, passwordSecret: secrets.password }, child);
        nodePolicy(cfg, l, jobs.selector, child);

        this.url = url;
        this.serviceName = sts;
        this.headlessServiceName = services.headlessName;
        this.selector = l.selector;
        this.passwordSecretName = secrets.password ? `${sts}-elastic` : undefined;
        this.bootstrapJobName = client.bootstrapJobName;
        this.registerOutputs({ url, publicUrl: `https://${hostOf(cfg, s.host)}`, bootstrapJobName: this.bootstrapJobName });
    }
}

interface NodeSecrets {
    /** The built-in superuser `elastic` and its generated password (security on). */
    password?: k8s.core.v1.Secret;
    /** The transport CA and node certificate (security on). */
    transport?: k8s.core.v1.Secret;
    /** ELASTIC_PASSWORD (security on). */
    passwordEnv: EnvVar[];
    /** The snapshot client's keys (s3 snapshots), for the keystore. */
    s3Env: EnvVar[];
    /** The names of the Secrets the pods read. */
    names: string[];
}

/**
 * The nodes' Secrets: with security on, the `elastic` password and the transport certificates; with
 * s3 snapshots, the object store's keys (a Secret made here when the stack sets both keys,
 * otherwise created on the cluster beforehand, section 1.2, and the pods wait for it).
 */
function nodeSecrets(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions): NodeSecrets {
    const s = cfg.searchEngine;
    const ns = s.namespace;
    const out: NodeSecrets = { passwordEnv: [], s3Env: [], names: [] };
    if (s.security.enabled) {
        const password = new random.RandomPassword(`${name}-elastic-password`, { length: s.security.passwordLength, special: false }, opts);
        out.password = new k8s.core.v1.Secret(`${name}-elastic`, {
            metadata: { name: `${s.name}-elastic`, namespace: ns, labels },
            type: "Opaque",
            stringData: { username: "elastic", password: password.result },
        }, opts);
        out.transport = transportCertificates(name, cfg, { namespace: ns, headless: `${s.name}-headless`, labels, secretName: `${s.name}-transport-tls` }, opts);
        out.passwordEnv = [{ name: "ELASTIC_PASSWORD", valueFrom: { secretKeyRef: { name: out.password.metadata.name, key: "password" } } }];
        out.names.push(`${s.name}-elastic`, `${s.name}-transport-tls`);
    }
    const s3 = s.snapshot.s3;
    if (s.snapshot.type === "s3") {
        if (s3.accessKey && s3.secretKey) {
            new k8s.core.v1.Secret(`${name}-s3`, {
                metadata: { name: s3.credentialsSecret, namespace: ns, labels },
                type: "Opaque",
                stringData: { "access-key": s3.accessKey, "secret-key": s3.secretKey },
            }, opts);
        }
        out.s3Env = [
            { name: "S3_ACCESS_KEY", valueFrom: { secretKeyRef: { name: s3.credentialsSecret, key: "access-key" } } },
            { name: "S3_SECRET_KEY", valueFrom: { secretKeyRef: { name: s3.credentialsSecret, key: "secret-key" } } },
        ];
        out.names.push(s3.credentialsSecret);
    }
    return out;
}

/** The fs snapshot repository's volume, shared by every node (none for s3 snapshots). */
function snapshotVolume(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions): k8s.core.v1.PersistentVolumeClaim | undefined {
    const s = cfg.searchEngine;
    const snap = s.snapshot;
    if (snap.type !== "fs") return undefined;
    // retainOnDelete: the StatefulSet is deleted with propagation orphan (components/lib/
    // claimGrowth.ts), so on a destroy its pods keep this claim in use and the claim's
    // deletion would wait for them forever; the namespace's deletion removes it instead.
    return protectedClaim(`${name}-snapshots`, cfg, {
        name: `${s.name}-snapshots`,
        namespace: s.namespace,
        labels,
        size: snap.fsVolumeSize,
        storageClass: snap.fsStorageClass,
        accessMode: snap.fsAccessMode,
    }, { ...opts, retainOnDelete: true });
}

/** A node's pod: an init container prepares the writable config and the keystore, then the node runs. */
function nodePod(cfg: StackConfig, settings: k8s.core.v1.ConfigMap, secrets: NodeSecrets, snapshots: k8s.core.v1.PersistentVolumeClaim | undefined): Omit<PodArgs, "spreadSelector"> {
    const s = cfg.searchEngine;
    const config = scratch("config", `${HOME}/config`, "64Mi");
    const logs = scratch("logs", `${HOME}/logs`, "1Gi");
    const tmp = scratch("tmp", "/tmp", "1Gi");
    const prepare = hardenedContainer({
        name: "prepare-config",
        image: s.image,
        command: ["sh", "-c", prepareConfigScript(cfg)],
        env: [...secrets.passwordEnv, ...secrets.s3Env],
        resources: s.init,
        runAsUser: IMAGE_UID,
        volumeMounts: [
            { name: "settings", mountPath: "/etc/search", readOnly: true },
            { name: config.mount.name, mountPath: "/work/config" },
            // Read only: whether the cluster has formed (settingsCopyStep).
            { name: "data", mountPath: `${HOME}/data`, readOnly: true },
            tmp.mount,
        ],
    });
    const node = hardenedContainer({
        name: "search",
        image: s.image,
        env: [{ name: "ES_JAVA_OPTS", value: `-Xms${s.heap} -Xmx${s.heap}` }, ...secrets.passwordEnv],
        ports: [{ name: "http", containerPort: s.httpPort }, { name: "transport", containerPort: s.transportPort }],
        resources: s,
        runAsUser: IMAGE_UID,
        startupProbe: tcpProbe("http", { period: 5, failureThreshold: 60 }),
        livenessProbe: tcpProbe("http", { period: 20, failureThreshold: 3 }),
        readinessProbe: execProbe(["sh", "-c", readinessScript(cfg)], { period: 10, timeout: 5 }),
        preStopDelay: s.preStopDelay,
        volumeMounts: [
            config.mount,
            ...(secrets.transport ? [{ name: "transport-tls", mountPath: CERTS, readOnly: true }] : []),
            { name: "data", mountPath: `${HOME}/data` },
            ...(snapshots ? [{ name: "snapshots", mountPath: s.snapshot.fsLocation }] : []),
            logs.mount,
            tmp.mount,
        ],
    });
    return {
        terminationGracePeriodSeconds: s.terminationGracePeriod,
        fsGroup: IMAGE_UID,
        initContainers: [prepare],
        containers: [node],
        volumes: [
            { name: "settings", configMap: { name: settings.metadata.name, defaultMode: 0o444 } },
            config.volume,
            logs.volume,
            tmp.volume,
            ...(secrets.transport ? [{ name: "transport-tls", secret: { secretName: secrets.transport.metadata.name, defaultMode: 0o440 } }] : []),
            ...(snapshots ? [{ name: "snapshots", persistentVolumeClaim: { claimName: snapshots.metadata.name } }] : []),
        ],
    };
}

/** The nodes: clients through the ingress controller and the snapshot client's jobs on HTTP, each other on the transport port. */
function nodePolicy(cfg: StackConfig, l: AppLabels, jobs: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const s = cfg.searchEngine;
    const ns = s.namespace;
    const nodes = podsIn(ns, l.selector, "the other search engine nodes");
    allowOnly(s.name, {
        namespace: ns,
        podSelector: l.selector,
        labels: l.labels,
        ingress: [
            { peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: s.httpPort }] },
            { peer: podsIn(ns, jobs, "the bootstrap, snapshot and restore jobs"), ports: [{ port: s.httpPort }] },
            { peer: nodes, ports: [{ port: s.transportPort }] },
        ],
        egress: [{ peer: nodes, ports: [{ port: s.transportPort }] }, ...(s.snapshot.type === "s3" ? [objectStoreFlow(cfg)] : [])],
    }, opts);
}

/** The object store: its namespace when the endpoint is an in-cluster service, the internet otherwise. */
function objectStoreFlow(cfg: StackConfig): Flow {
    const e = s3Endpoint(cfg);
    const inCluster = /^[a-z0-9-]+\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(e.host);
    return { peer: inCluster ? inNamespace(inCluster[1]) : internet(), ports: [{ port: e.port }] };
}
