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
import * as crypto from "crypto";
import * as fs from "fs";
import * as path from "path";
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import * as tls from "@pulumi/tls";
import type { StackConfig } from "../config";
import { disruptionBudget } from "./lib/availability";
import { NEVER, scriptFile } from "./lib/backupCronJob";
import { hostOf, webIngress } from "./lib/ingress";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, internet, ingressController, namespace as inNamespace, podsIn } from "./lib/network";
import { execProbe, hardenedContainer, hardenedPodSpec, scratch, tcpProbe } from "./lib/pod";
import { withoutSettlingWait } from "./lib/engineOrder";
import { keyOf } from "../config/schema";
import { ClaimGuard, growableStatefulSet } from "./lib/claimGrowth";

/** The bootstrap script (repository, verify, role, lifecycle policy); tested in test/searchEngine.test.ts. */
export const SEARCH_SCRIPT = fs.readFileSync(path.join(__dirname, "searchBootstrap.sh"), "utf8");

export interface SearchEngineArgs {
    config: StackConfig;
    /** The run's volume guard (main.ts): judges the StatefulSet's volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
}

/** The uid and gid of the search engine image; its files under /usr/share/elasticsearch belong to them. */
const IMAGE_UID = 1000;
/** app.kubernetes.io/name of every object; the object store admits {name: search-engine, component: node}. */
export const APP = "search-engine";
const HOME = "/usr/share/elasticsearch";
const CERTS = `${HOME}/config/certs`;

/** The repository body of PUT /_snapshot/<repo> (section 2.10). */
export function repositoryBody(cfg: StackConfig): object {
    const snap = cfg.searchEngine.snapshot;
    if (snap.type === "fs") return { type: "fs", settings: { location: snap.fsLocation } };
    return { type: "s3", settings: { bucket: snap.s3.bucket, client: snap.s3.client, endpoint: s3Endpoint(cfg).hostPort, path_style_access: snap.s3.pathStyle } };
}

/** The backup role of POST /_security/role/<role> (section 2.10). */
export function roleBody(cfg: StackConfig): object {
    const r = cfg.searchEngine.snapshot.role;
    return { cluster: [...r.cluster], indices: [{ names: [...r.indexNames], privileges: [...r.indexPrivileges] }] };
}

/** The lifecycle policy of PUT /_slm/policy/<id> (sections 2.10, 8.1). */
export function policyBody(cfg: StackConfig): object {
    const s = cfg.searchEngine.snapshot;
    const p = s.policy;
    return {
        schedule: p.schedule,
        name: p.name,
        repository: s.repository,
        config: { indices: [...p.indices], include_global_state: p.includeGlobalState },
        retention: { expire_after: p.expireAfter, min_count: p.minCount, max_count: p.maxCount },
    };
}

function s3Endpoint(cfg: StackConfig) {
    const u = new URL(cfg.searchEngine.snapshot.s3.endpoint);
    const port = Number(u.port) || (u.protocol === "https:" ? 443 : 80);
    return { host: u.hostname, port, hostPort: `${u.hostname}:${port}`, protocol: u.protocol.replace(/:$/, "") };
}

/** elasticsearch.yml: discovery from the headless service, path.repo, security, s3 client. */
export function nodeSettings(cfg: StackConfig, headless: string): string {
    const s = cfg.searchEngine;
    const lines = [
        `cluster.name: ${JSON.stringify(s.clusterName)}`,
        "node.name: ${HOSTNAME}",
        "network.host: 0.0.0.0",
        `http.port: ${s.httpPort}`,
        `transport.port: ${s.transportPort}`,
        `path.data: ${HOME}/data`,
        `path.logs: ${HOME}/logs`,
        `node.store.allow_mmap: ${s.allowMmap}`,
    ];
    if (s.snapshot.type === "fs") lines.push(`path.repo: [${JSON.stringify(s.snapshot.fsLocation)}]`);
    if (s.replicas <= 1) lines.push("discovery.type: single-node");
    else {
        lines.push(`discovery.seed_hosts: [${JSON.stringify(headless)}]`);
        // Only for the first bootstrap: the init container leaves it out once the node holds cluster
        // state (settingsCopyStep), since 8.x warns on every start of a formed node that keeps it.
        lines.push(`cluster.initial_master_nodes: [${Array.from({ length: s.replicas }, (_, i) => JSON.stringify(`${s.name}-${i}`)).join(", ")}]`);
    }
    if (s.security.enabled) {
        lines.push(
            "xpack.security.enabled: true",
            // TLS to clients ends at the ingress controller; inside, the NetworkPolicy limits who may connect.
            "xpack.security.http.ssl.enabled: false",
            "xpack.security.transport.ssl.enabled: true",
            "xpack.security.transport.ssl.verification_mode: certificate",
            "xpack.security.transport.ssl.key: certs/tls.key",
            "xpack.security.transport.ssl.certificate: certs/tls.crt",
            "xpack.security.transport.ssl.certificate_authorities: [certs/ca.crt]",
        );
    } else lines.push("xpack.security.enabled: false");
    if (s.snapshot.type === "s3") {
        const e = s3Endpoint(cfg);
        const c = s.snapshot.s3.client;
        lines.push(`s3.client.${c}.endpoint: ${JSON.stringify(e.hostPort)}`, `s3.client.${c}.protocol: ${e.protocol}`, `s3.client.${c}.path_style_access: ${s.snapshot.s3.pathStyle}`);
    }
    return lines.join("\n") + "\n";
}

/** Written into the data path by the readiness probe once this node has seen an elected master. */
export const FORMED_MARKER = ".cluster-formed";

/**
 * Copies elasticsearch.yml into the writable config folder. cluster.initial_master_nodes is for the
 * first bootstrap only (Elasticsearch: remove it once the cluster has formed; 8.x warns on every start
 * of a node that joined a cluster and still has it): once the node has seen an elected master (the
 * marker its readiness probe writes into the data path), the line is left out, so a restart or a
 * replaced pod of a formed cluster never carries it, while a node restarted before the cluster first
 * formed keeps it and can still bootstrap.
 */
export function settingsCopyStep(from: string, to: string, dataPath: string): string {
    return `if [ -e ${dataPath}/${FORMED_MARKER} ]; then grep -v '^cluster\\.initial_master_nodes:' ${from} > ${to}; else cp ${from} ${to}; fi`;
}

/**
 * The readiness command: the node's own health; on a multi-node cluster it also leaves the marker
 * once the node sees an elected master (never changing the verdict).
 */
export function readinessScript(cfg: StackConfig): string {
    const s = cfg.searchEngine;
    const get = (p: string) => s.security.enabled
        ? `printf 'user = "elastic:%s"\\n' "$ELASTIC_PASSWORD" | curl -sf -K - '${`http://127.0.0.1:${s.httpPort}${p}`}'`
        : `curl -sf '${`http://127.0.0.1:${s.httpPort}${p}`}'`;
    const health = `${get("/_cluster/health?local=true")} -o /dev/null`;
    if (s.replicas <= 1) return health;
    const marker = `${HOME}/data/${FORMED_MARKER}`;
    return `${health} && { [ -e ${marker} ] || { ${get("/_cluster/state/master_node?local=true")} | grep -q '"master_node":"' && touch ${marker}; } || true; }`;
}

/**
 * The init container's script: copy the image's config directory into the writable one, add our
 * elasticsearch.yml and fill the keystore (bootstrap password, s3 keys) from env (Secrets).
 */
export function prepareConfigScript(cfg: StackConfig): string {
    const s = cfg.searchEngine;
    const add = (env: string, setting: string) => `printf '%s' "$${env}" | elasticsearch-keystore add --stdin --force ${setting}`;
    return [
        "set -eu",
        `cp -R ${HOME}/config/. /work/config/`,
        settingsCopyStep("/etc/search/elasticsearch.yml", "/work/config/elasticsearch.yml", `${HOME}/data`),
        "export ES_PATH_CONF=/work/config",
        "[ -f /work/config/elasticsearch.keystore ] || elasticsearch-keystore create",
        ...(s.security.enabled ? [add("ELASTIC_PASSWORD", "bootstrap.password")] : []),
        ...(s.snapshot.type === "s3"
            ? [add("S3_ACCESS_KEY", `s3.client.${s.snapshot.s3.client}.access_key`), add("S3_SECRET_KEY", `s3.client.${s.snapshot.s3.client}.secret_key`)]
            : []),
        "echo config and keystore ready",
    ].join("\n");
}

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
        const snap = s.snapshot;
        const ns = s.namespace;
        const child = { parent: this };
        const sts = s.name;
        const headless = `${sts}-headless`;
        const l = appLabels(cfg, { name: APP, component: "node", instance: sts });
        const jobs = appLabels(cfg, { name: APP, component: "snapshot-client", instance: `${sts}-snapshot-client` });
        const secretNames: string[] = [];

        let passwordSecret: k8s.core.v1.Secret | undefined;
        let transportSecret: k8s.core.v1.Secret | undefined;
        if (s.security.enabled) {
            const password = new random.RandomPassword(`${name}-elastic-password`, { length: s.security.passwordLength, special: false }, child);
            passwordSecret = new k8s.core.v1.Secret(`${name}-elastic`, {
                metadata: { name: `${sts}-elastic`, namespace: ns, labels: l.labels },
                type: "Opaque",
                stringData: { username: "elastic", password: password.result },
            }, child);
            transportSecret = transportCertificates(name, cfg, { namespace: ns, headless, labels: l.labels, secretName: `${sts}-transport-tls` }, child);
            secretNames.push(`${sts}-elastic`, `${sts}-transport-tls`);
        }
        const passwordEnv = passwordSecret
            ? [{ name: "ELASTIC_PASSWORD", valueFrom: { secretKeyRef: { name: passwordSecret.metadata.name, key: "password" } } }]
            : [];

        let s3Env: k8s.types.input.core.v1.EnvVar[] = [];
        if (snap.type === "s3") {
            if (snap.s3.accessKey && snap.s3.secretKey) {
                new k8s.core.v1.Secret(`${name}-s3`, {
                    metadata: { name: snap.s3.credentialsSecret, namespace: ns, labels: l.labels },
                    type: "Opaque",
                    stringData: { "access-key": snap.s3.accessKey, "secret-key": snap.s3.secretKey },
                }, child);
            }
            // Otherwise the Secret is created on the cluster beforehand (section 1.2); the pods wait for it.
            s3Env = [
                { name: "S3_ACCESS_KEY", valueFrom: { secretKeyRef: { name: snap.s3.credentialsSecret, key: "access-key" } } },
                { name: "S3_SECRET_KEY", valueFrom: { secretKeyRef: { name: snap.s3.credentialsSecret, key: "secret-key" } } },
            ];
            secretNames.push(snap.s3.credentialsSecret);
        }

        const settings = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${sts}-config`, namespace: ns, labels: l.labels },
            data: { "elasticsearch.yml": nodeSettings(cfg, headless) },
        }, child);

        let snapshotClaim: k8s.core.v1.PersistentVolumeClaim | undefined;
        if (snap.type === "fs") {
            snapshotClaim = new k8s.core.v1.PersistentVolumeClaim(`${name}-snapshots`, {
                metadata: { name: `${sts}-snapshots`, namespace: ns, labels: l.labels },
                spec: { accessModes: [snap.fsAccessMode], storageClassName: snap.fsStorageClass, resources: { requests: { storage: snap.fsVolumeSize } } },
            // retainOnDelete: the StatefulSet is deleted with propagation orphan (components/lib/
            // claimGrowth.ts), so on a destroy its pods keep this claim in use and the claim's
            // deletion would wait for them forever; the namespace's deletion removes it instead.
            }, { ...child, protect: cfg.environment.tier === "prod", retainOnDelete: true });
        }

        const config = scratch("config", `${HOME}/config`, "64Mi");
        const logs = scratch("logs", `${HOME}/logs`, "1Gi");
        const tmp = scratch("tmp", "/tmp", "1Gi");
        const prepare = hardenedContainer({
            name: "prepare-config",
            image: s.image,
            command: ["sh", "-c", prepareConfigScript(cfg)],
            env: [...passwordEnv, ...s3Env],
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
            env: [{ name: "ES_JAVA_OPTS", value: `-Xms${s.heap} -Xmx${s.heap}` }, ...passwordEnv],
            ports: [{ name: "http", containerPort: s.httpPort }, { name: "transport", containerPort: s.transportPort }],
            resources: s,
            runAsUser: IMAGE_UID,
            startupProbe: tcpProbe("http", { period: 5, failureThreshold: 60 }),
            livenessProbe: tcpProbe("http", { period: 20, failureThreshold: 3 }),
            readinessProbe: execProbe(["sh", "-c", readinessScript(cfg)], { period: 10, timeout: 5 }),
            preStopDelay: s.preStopDelay,
            volumeMounts: [
                config.mount,
                ...(transportSecret ? [{ name: "transport-tls", mountPath: CERTS, readOnly: true }] : []),
                { name: "data", mountPath: `${HOME}/data` },
                ...(snapshotClaim ? [{ name: "snapshots", mountPath: snap.fsLocation }] : []),
                logs.mount,
                tmp.mount,
            ],
        });

        growableStatefulSet(name, {
            metadata: { name: sts, namespace: ns, labels: l.labels, annotations: reloaderAnnotations(cfg, { configMaps: [`${sts}-config`], secrets: secretNames }) },
            spec: {
                serviceName: headless,
                replicas: s.replicas,
                // Every master-eligible node must be up for the first election.
                podManagementPolicy: "Parallel",
                updateStrategy: { type: "RollingUpdate" },
                selector: { matchLabels: l.selector },
                template: {
                    metadata: { labels: l.labels },
                    spec: hardenedPodSpec(cfg, {
                        terminationGracePeriodSeconds: s.terminationGracePeriod,
                        fsGroup: IMAGE_UID,
                        spreadSelector: l.selector,
                        initContainers: [prepare],
                        containers: [node],
                        volumes: [
                            { name: "settings", configMap: { name: settings.metadata.name, defaultMode: 0o444 } },
                            config.volume,
                            logs.volume,
                            tmp.volume,
                            ...(transportSecret ? [{ name: "transport-tls", secret: { secretName: transportSecret.metadata.name, defaultMode: 0o440 } }] : []),
                            ...(snapshotClaim ? [{ name: "snapshots", persistentVolumeClaim: { claimName: snapshotClaim.metadata.name } }] : []),
                        ],
                    }),
                },
                volumeClaimTemplates: [{
                    metadata: { name: "data", labels: l.labels },
                    spec: { accessModes: ["ReadWriteOnce"], storageClassName: s.storageClass, resources: { requests: { storage: s.dataVolumeSize } } },
                }],
            },
        }, { ...child, dependsOn: [settings, ...(passwordSecret ? [passwordSecret] : [])] }, { data: keyOf(["searchEngine", "dataVolumeSize"]) }, args.volumeGuard);

        new k8s.core.v1.Service(`${name}-headless`, {
            metadata: { name: headless, namespace: ns, labels: l.labels },
            spec: {
                clusterIP: "None",
                // Nodes find each other before they are ready.
                publishNotReadyAddresses: true,
                selector: l.selector,
                ports: [
                    { name: "http", port: s.httpPort, targetPort: "http", protocol: "TCP" },
                    { name: "transport", port: s.transportPort, targetPort: "transport", protocol: "TCP" },
                ],
            },
        }, child);
        // The same pods as the headless service, by a different selector (selectors stay unique per namespace).
        const clientSelector = { "app.kubernetes.io/name": l.selector["app.kubernetes.io/name"], "app.kubernetes.io/instance": l.selector["app.kubernetes.io/instance"] };
        const service = new k8s.core.v1.Service(name, {
            metadata: withoutSettlingWait({ name: sts, namespace: ns, labels: l.labels }),
            spec: { type: "ClusterIP", selector: clientSelector, ports: [{ name: "http", port: s.httpPort, targetPort: "http", protocol: "TCP" }] },
        }, child);
        webIngress(sts, cfg, { namespace: ns, hostLabel: s.host, serviceName: sts, servicePort: s.httpPort, labels: l.labels }, { ...child, dependsOn: [service] });
        disruptionBudget(sts, { namespace: ns, labels: l.labels, selector: l.selector, replicas: s.replicas }, child);

        const url = `http://${sts}.${ns}.svc.cluster.local:${s.httpPort}`;
        const client = new SnapshotClient(`${name}`, cfg, { namespace: ns, sts, url, labels: jobs, passwordSecret }, child);

        allowOnly(sts, {
            namespace: ns,
            podSelector: l.selector,
            labels: l.labels,
            ingress: [
                { peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: s.httpPort }] },
                { peer: podsIn(ns, jobs.selector, "the bootstrap, snapshot and restore jobs"), ports: [{ port: s.httpPort }] },
                { peer: podsIn(ns, l.selector, "the other search engine nodes"), ports: [{ port: s.transportPort }] },
            ],
            egress: [
                { peer: podsIn(ns, l.selector, "the other search engine nodes"), ports: [{ port: s.transportPort }] },
                ...(snap.type === "s3" ? [objectStoreFlow(cfg)] : []),
            ],
        }, child);

        this.url = url;
        this.serviceName = sts;
        this.headlessServiceName = headless;
        this.selector = l.selector;
        this.passwordSecretName = passwordSecret ? `${sts}-elastic` : undefined;
        this.bootstrapJobName = client.bootstrapJobName;
        this.registerOutputs({ url, publicUrl: `https://${hostOf(cfg, s.host)}`, bootstrapJobName: this.bootstrapJobName });
    }
}

/** The object store: its namespace when the endpoint is an in-cluster service, the internet otherwise. */
function objectStoreFlow(cfg: StackConfig): Flow {
    const e = s3Endpoint(cfg);
    const inCluster = /^[a-z0-9-]+\.([a-z0-9-]+)\.svc(\.cluster\.local)?$/.exec(e.host);
    return { peer: inCluster ? inNamespace(inCluster[1]) : internet(), ports: [{ port: e.port }] };
}

/** A CA and one node certificate for every node (verification_mode certificate: the CA, not the host name). */
function transportCertificates(
    name: string,
    cfg: StackConfig,
    args: { namespace: string; headless: string; labels: Record<string, string>; secretName: string },
    opts: pulumi.CustomResourceOptions,
): k8s.core.v1.Secret {
    const hours = cfg.searchEngine.security.certValidityHours;
    const caKey = new tls.PrivateKey(`${name}-transport-ca`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, opts);
    const ca = new tls.SelfSignedCert(`${name}-transport-ca`, {
        privateKeyPem: caKey.privateKeyPem,
        isCaCertificate: true,
        validityPeriodHours: hours,
        subject: { commonName: `${cfg.searchEngine.clusterName} transport CA` },
        allowedUses: ["cert_signing", "crl_signing"],
    }, opts);
    const nodeKey = new tls.PrivateKey(`${name}-transport-node`, { algorithm: "ECDSA", ecdsaCurve: "P256" }, opts);
    const domain = `${args.headless}.${args.namespace}.svc.cluster.local`;
    const request = new tls.CertRequest(`${name}-transport-node`, {
        privateKeyPem: nodeKey.privateKeyPem,
        subject: { commonName: domain },
        dnsNames: [`*.${domain}`, domain],
    }, opts);
    const cert = new tls.LocallySignedCert(`${name}-transport-node`, {
        certRequestPem: request.certRequestPem,
        caPrivateKeyPem: caKey.privateKeyPem,
        caCertPem: ca.certPem,
        validityPeriodHours: hours,
        allowedUses: ["digital_signature", "key_encipherment", "server_auth", "client_auth"],
    }, opts);
    return new k8s.core.v1.Secret(`${name}-transport-tls`, {
        metadata: { name: args.secretName, namespace: args.namespace, labels: args.labels },
        type: "Opaque",
        stringData: { "ca.crt": ca.certPem, "tls.crt": cert.certPem, "tls.key": nodeKey.privateKeyPem },
    }, opts);
}

interface SnapshotClientArgs {
    namespace: string;
    sts: string;
    url: string;
    labels: { labels: Record<string, string>; selector: Record<string, string> };
    passwordSecret?: k8s.core.v1.Secret;
}

/**
 * The jobs that talk to the snapshot API (section 4.5): the bootstrap Job, the on-demand snapshot
 * and the restore. The bootstrap Job's name carries a hash of everything it sends (script,
 * bodies, image, target): a change of any input is a new Job that runs once, an unchanged stack
 * leaves the finished Job alone, and every call it makes is idempotent, so a re-run (delete the
 * Job and `pulumi up`) is harmless.
 */
class SnapshotClient {
    readonly bootstrapJobName: string;

    constructor(name: string, cfg: StackConfig, a: SnapshotClientArgs, opts: pulumi.CustomResourceOptions) {
        const s = cfg.searchEngine;
        const snap = s.snapshot;
        const j = s.jobs;
        const ns = a.namespace;
        const bodies: Record<string, string> = {
            "repository.json": JSON.stringify(repositoryBody(cfg)),
            "policy.json": JSON.stringify(policyBody(cfg)),
            ...(s.security.enabled ? { "role.json": JSON.stringify(roleBody(cfg)) } : {}),
        };
        const scripts = new k8s.core.v1.ConfigMap(`${name}-snapshot-scripts`, {
            metadata: { name: `${a.sts}-snapshot-scripts`, namespace: ns, labels: a.labels.labels },
            data: { "bootstrap.sh": SEARCH_SCRIPT, "snapshot.sh": scriptFile("search-snapshot.sh").content, "restore.sh": scriptFile("search-restore.sh").content },
        }, opts);
        const hash = crypto.createHash("sha256").update(JSON.stringify({ SEARCH_SCRIPT, bodies, image: j.image, url: a.url, security: s.security.enabled })).digest("hex").slice(0, 10);
        const bodiesMap = new k8s.core.v1.ConfigMap(`${name}-bootstrap-bodies`, {
            metadata: { name: `${a.sts}-bootstrap-${hash}`, namespace: ns, labels: a.labels.labels },
            data: bodies,
        }, opts);

        const env = [
            { name: "SEARCH_URL", value: a.url },
            { name: "SNAPSHOT_REPOSITORY", value: snap.repository },
            { name: "WAIT_TIMEOUT", value: String(j.waitTimeout) },
            { name: "HOME", value: "/tmp" },
            ...(a.passwordSecret
                ? [
                    { name: "SEARCH_USERNAME", valueFrom: { secretKeyRef: { name: a.passwordSecret.metadata.name, key: "username" } } },
                    { name: "SEARCH_PASSWORD", valueFrom: { secretKeyRef: { name: a.passwordSecret.metadata.name, key: "password" } } },
                ]
                : []),
        ];
        const tmp = scratch("tmp", "/tmp", "64Mi");
        const podSpec = (mode: string, extraEnv: { name: string; value: string }[], extra: { bodies?: boolean; optionsConfigMap?: string } = {}) =>
            hardenedPodSpec(cfg, {
                restartPolicy: "Never",
                containers: [hardenedContainer({
                    name: mode,
                    image: j.image,
                    command: ["sh", `/scripts/${mode}.sh`],
                    env: [...env, ...extraEnv],
                    envFrom: extra.optionsConfigMap ? [{ configMapRef: { name: extra.optionsConfigMap, optional: true } }] : undefined,
                    resources: j,
                    preStopDelay: 0,
                    volumeMounts: [
                        { name: "scripts", mountPath: "/scripts", readOnly: true },
                        ...(extra.bodies ? [{ name: "bodies", mountPath: "/bodies", readOnly: true }] : []),
                        tmp.mount,
                    ],
                })],
                volumes: [
                    { name: "scripts", configMap: { name: scripts.metadata.name, defaultMode: 0o555 } },
                    ...(extra.bodies ? [{ name: "bodies", configMap: { name: bodiesMap.metadata.name } }] : []),
                    tmp.volume,
                ],
            });
        const jobSpec = (spec: k8s.types.input.core.v1.PodSpec, backoffLimit: number) => ({
            backoffLimit,
            activeDeadlineSeconds: j.activeDeadline,
            template: { metadata: { labels: a.labels.labels }, spec },
        });

        this.bootstrapJobName = `${a.sts}-bootstrap-${hash}`;
        new k8s.batch.v1.Job(`${name}-bootstrap`, {
            metadata: { name: this.bootstrapJobName, namespace: ns, labels: a.labels.labels },
            spec: jobSpec(podSpec("bootstrap", [
                { name: "BODIES_DIR", value: "/bodies" },
                { name: "POLICY_ID", value: snap.policy.id },
                ...(s.security.enabled ? [{ name: "ROLE", value: snap.role.name }] : []),
            ], { bodies: true }), j.backoffLimit),
        }, { ...opts, dependsOn: [scripts, bodiesMap], deleteBeforeReplace: true });

        const onDemand = (suffix: string, mode: string, extraEnv: { name: string; value: string }[], how: string, optionsConfigMap?: string) =>
            new k8s.batch.v1.CronJob(`${name}-${suffix}`, {
                metadata: {
                    name: `${a.sts}-${suffix}`,
                    namespace: ns,
                    labels: a.labels.labels,
                    annotations: { "ops/how-to-run": how, ...(optionsConfigMap ? { "ops/options-configmap": optionsConfigMap } : {}) },
                },
                spec: {
                    // Never fires: the job runs only when created from this template by hand.
                    schedule: NEVER,
                    suspend: true,
                    concurrencyPolicy: "Forbid",
                    successfulJobsHistoryLimit: cfg.backups.job.successfulJobsHistoryLimit,
                    failedJobsHistoryLimit: cfg.backups.job.failedJobsHistoryLimit,
                    jobTemplate: { metadata: { labels: a.labels.labels }, spec: jobSpec(podSpec(mode, extraEnv, { optionsConfigMap }), 0) },
                },
            }, { ...opts, dependsOn: [scripts] });
        // backups/scripts/search-snapshot.sh and search-restore.sh; their options come from a ConfigMap made for one run.
        onDemand("snapshot", "snapshot", [],
            `kubectl -n ${ns} create job --from=cronjob/${a.sts}-snapshot ${a.sts}-snapshot-<suffix>`, `${a.sts}-snapshot-options`);
        onDemand("restore", "restore", [],
            `kubectl -n ${ns} create configmap ${a.sts}-restore-options --from-literal=SNAPSHOT_NAME=<snapshot> --from-literal=RESTORE_INDICES=<indices>; kubectl -n ${ns} create job --from=cronjob/${a.sts}-restore ${a.sts}-restore-<suffix>`,
            `${a.sts}-restore-options`);

        allowOnly(`${a.sts}-snapshot-client`, {
            namespace: ns,
            podSelector: a.labels.selector,
            labels: a.labels.labels,
            ingress: [],
            egress: [{ peer: podsIn(ns, appLabels(cfg, { name: APP, component: "node", instance: a.sts }).selector, "the search engine"), ports: [{ port: s.httpPort }] }],
        }, opts);
    }
}
