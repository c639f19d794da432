/**
 * The search engine node's configuration and scripts, as text: elasticsearch.yml, the init
 * container's script that prepares the writable config folder and the keystore, and the readiness
 * probe's command.
 */
import type { StackConfig } from "../../config";

/** The image's home; its files belong to the image's uid and gid. */
export const HOME = "/usr/share/elasticsearch";
/** Where the transport certificates are mounted (elasticsearch.yml names them relative to config/). */
export const CERTS = `${HOME}/config/certs`;

/** The snapshot repository's S3 endpoint as the s3 client settings want it. */
export function s3Endpoint(cfg: StackConfig) {
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
