import {
    chartVersion, cpu, cron, image, int, intList, list, memory, nodePort, port, relativePath, str, storage, url, namespaceName, hostLabel, sshRepository,
} from "../schema";

const NAME = { pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/, expected: "a DNS label such as \"uptime\"" };

/** A packaged chart installed by a child application (section 2.7). */
function child(what: string, d: { namespace: string; repo: string; chart: string; version: string; releaseName: string; hostLabel: string; port: number }) {
    return {
        namespace: namespaceName(`the namespace of ${what}`, d.namespace),
        repo: url(`the chart repository of ${what}`, d.repo, ["https", "oci"]),
        chart: str(`the chart of ${what}`, d.chart, NAME),
        version: chartVersion(`the pinned chart version of ${what} (the child application's targetRevision)`, d.version),
        releaseName: str(`the helm release name of ${what}`, d.releaseName, NAME),
        hostLabel: hostLabel(`first label of the public host of ${what} (<label>.<domain>)`, d.hostLabel),
        port: port(`the container port of ${what}`, d.port),
    };
}

/** A SQLite-backed child application: one replica, Recreate, its volume backed up by a CronJob (section 8.3). */
function sqliteApp(what: string, d: { pvcName: string; volumeSize: string; database: string; schedule: string }) {
    return {
        pvcName: str(`the PersistentVolumeClaim the ${what} chart creates (mounted by its backup job)`, d.pvcName, NAME),
        volumeSize: storage(`size of the ${what} data volume`, d.volumeSize),
        database: relativePath("relative file path")(`the SQLite database file of the ${what}, relative to its data volume`, d.database),
        uid: int(`the non-root user and fsGroup of the ${what} pod and of its backup job (so both can read and write the files)`, 10001, { min: 1, max: 2147483647 }),
        requests: { cpu: cpu(`${what} cpu request`, "100m"), memory: memory(`${what} memory request`, "256Mi") },
        limits: { cpu: cpu(`${what} cpu limit`, "500m"), memory: memory(`${what} memory limit`, "1Gi") },
        backup: {
            schedule: cron(`${what} SQLite copy (section 8.3 says manual; scheduled here so a copy always exists)`, d.schedule),
            volumeSize: storage(`size of the ${what} backup volume`, "5Gi"),
        },
    };
}

/**
 * GitOps (sections 2.7, 5.8, 8.2, 8.3): the parent application that Pulumi creates, the child
 * applications generated into gitops/<stack>/ (`npm run gen:gitops`), the repository access and
 * the read-only API account of Argo CD.
 */
export const gitops = {
    repoUrl: sshRepository("the git repository whose main branch holds gitops/<stack>/ (read over SSH with the deploy key)", "git@github.com:example/ops-environment.git"),
    branch: str("the branch the parent application reads", "main"),
    pathPrefix: relativePath("relative folder path")("the folder of the child application manifests; the parent reads <prefix>/<stack>", "gitops"),
    parentName: str("the name of the parent application", "ops-apps", NAME),
    project: str("the Argo CD project of every application", "default", NAME),
    destinationServer: url("the cluster the applications deploy to", "https://kubernetes.default.svc", ["https"]),
    serverNodePort: nodePort("the node port of the GitOps server (section 8.2)", 30443),
    serverHttpNodePort: nodePort("the node port of the GitOps server's plain-HTTP Service port: argo-cd 7.7.11 publishes both of its server Service ports (http and https, the same multiplexed container port) on node ports; the chart's default nodePortHttp", 30080),
    knownHosts: list("SSH known hosts lines of the repository host (public host keys)", [
        "github.com ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIOMqqnkVzrm0SdG6UOoqKLsabgH5C9okWi0dh2l9GKJl",
    ]),
    repositorySecretName: str("the Argo CD repository Secret holding the deploy key", "ops-repository", NAME),
    readonlyAccount: str("the local account with capability apiKey only (section 2.7)", "readonly", NAME),
    readonlyRole: str("the RBAC role of the read-only account (get on applications, projects, repositories, clusters)", "readonly-get", NAME),
    gitPorts: intList("ports of the git and chart hosts Argo CD reaches (22 for SSH, 443 for HTTPS)", [22, 443], port("a TCP port")),
    uptimeMonitor: {
        ...child("the uptime monitor", { namespace: "uptime", repo: "https://dirsigler.github.io/uptime-kuma-helm", chart: "uptime-kuma", version: "2.21.2", releaseName: "uptime-kuma", hostLabel: "uptime", port: 3001 }),
        image: image("the uptime monitor image (the chart's image.repository and image.tag; chart 2.21.2 ships 1.23.13-debian)", "docker.io/louislam/uptime-kuma:1.23.13-debian"),
        ...sqliteApp("uptime monitor", { pvcName: "uptime-kuma-pvc", volumeSize: "4Gi", database: "kuma.db", schedule: "15 4 * * *" }),
        probePorts: intList("ports the uptime monitor's checks may reach (the environment's public hosts and outside services)", [80, 443], port("a TCP port")),
    },
    chatUi: {
        ...child("the chat UI", { namespace: "chat", repo: "https://helm.openwebui.com", chart: "open-webui", version: "10.2.1", releaseName: "open-webui", hostLabel: "chat", port: 8080 }),
        image: image("the chat UI image (the chart's image.repository and image.tag; chart 10.2.1's appVersion is 0.7.2)", "ghcr.io/open-webui/open-webui:0.7.2"),
        ...sqliteApp("chat UI", { pvcName: "open-webui", volumeSize: "2Gi", database: "webui.db", schedule: "30 4 * * *" }),
        uploads: relativePath("relative folder path")("the chat UI uploads folder, relative to its data volume (backed up with the database)", "uploads"),
        modelBaseUrl: url("the OpenAI-compatible API the chat UI talks to", "https://api.openai.com/v1", ["https"]),
        secretKeyLength: int("length of the generated WEBUI_SECRET_KEY (alphanumeric)", 32, { min: 32, max: 128 }),
    },
    dashboard: {
        ...child("the dashboard", { namespace: "dashboard", repo: "https://grafana.github.io/helm-charts", chart: "grafana", version: "8.6.4", releaseName: "grafana", hostLabel: "dashboard", port: 3000 }),
        image: image("the dashboard image (the chart's image.registry, repository, tag and sha; chart 8.6.4's appVersion is 11.3.1)", "docker.io/grafana/grafana:11.3.1"),
        uid: int("the dashboard's non-root user and group (the grafana image's own user, 472)", 472, { min: 1, max: 2147483647 }),
        adminUser: str("the dashboard's admin user (its password is generated on the cluster)", "admin"),
        passwordLength: int("length of the generated dashboard admin password (alphanumeric)", 24, { min: 16, max: 128 }),
        requests: { cpu: cpu("dashboard cpu request", "100m"), memory: memory("dashboard memory request", "128Mi") },
        limits: { cpu: cpu("dashboard cpu limit", "500m"), memory: memory("dashboard memory limit", "512Mi") },
    },
};
