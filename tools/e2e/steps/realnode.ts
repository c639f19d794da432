/**
 * The real node (issue 40, docs/e2e.md "The real node"): containerd and runc from Debian, the
 * kubelet and kube-proxy of the control plane's release, Debian's CNI plugins, kube-router as the
 * NetworkPolicy firewall and CoreDNS as the cluster DNS, joined to the run's control plane beside
 * the kwok nodes, in the run's own namespaces (tools/e2e/namespace.sh): its fixed paths are the
 * namespace's tmpfs, its iptables rules and interfaces the namespace's, its cgroups the run's.
 * The images are the ones tools/e2e/images built into the cache, imported into containerd.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";
import { since } from "../harness/context";
import { cached } from "../images/build";
import { IMAGE_RECIPES, type ImageRecipe } from "../images/recipes";
import { issueCert, nodeIp, writeKubeconfig } from "./cluster";
import { NODE_NAME } from "./realnodePod";
import { startFakeModelApi, type FakeModelApi } from "../../../test/products/fakeModelApi";

export { NODE_NAME };
export const POD_CIDR = "10.244.0.0/24";
export const CLUSTER_DNS = "10.96.0.10";
const CONTAINERD_SOCKET = "/run/containerd/containerd.sock";

const env = (k: string) => process.env[k] ?? "";
const versions = () => ({ k8s: env("K8S_VERSION"), kubeRouter: env("KUBE_ROUTER_VERSION"), coredns: env("COREDNS_VERSION"), pause: env("PAUSE_VERSION") });

/** Why the real node cannot run here (its toolchain, its images, the namespace), or undefined. */
export function skipReason(ctx: Context): string | undefined {
    if (!nodeIp()) return "not in the run's own network namespace (E2E_NODE_IP unset: start it with npm run e2e)";
    const missing = env("E2E_NODE_MISSING").split(";").filter(Boolean);
    if (missing.length) return `the real node's toolchain lacks ${missing.join(", ")}; build it with: bash tools/e2e/build.sh node images`;
    const images = IMAGE_RECIPES.filter((r) => !cached(r)).map((r) => r.name);
    if (images.length) return `images not built: ${images.join(" ")}; build them with: bash tools/e2e/build.sh images`;
    void ctx;
    return undefined;
}

const ctr = (ctx: Context, args: string[], opts: { quiet?: boolean; allowFail?: boolean } = {}) => ctx.run("ctr", ["--address", CONTAINERD_SOCKET, "-n", "k8s.io", ...args], opts);

function containerdConfig(ctx: Context): string {
    const root = ctx.path("node", "containerd");
    return `version = 2
root = "${root}/root"
state = "/run/containerd"
disabled_plugins = ["io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]
[grpc]
  address = "${CONTAINERD_SOCKET}"
[plugins."io.containerd.internal.v1.opt"]
  path = "${root}/opt"
[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "registry.k8s.io/pause:${versions().pause}"
  # Root without CAP_SYS_RESOURCE cannot lower a sandbox's oom_score_adj to -998 (issue 40).
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        BinaryName = "/usr/sbin/runc"
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "/usr/lib/cni"
    conf_dir = "${ctx.path("node", "cni")}"
`;
}

function cniConfig(): string {
    return JSON.stringify({
        cniVersion: "1.0.0",
        name: "e2e",
        plugins: [
            { type: "bridge", bridge: "cni0", isGateway: true, ipMasq: false, hairpinMode: true, ipam: { type: "host-local", ranges: [[{ subnet: POD_CIDR }]], routes: [{ dst: "0.0.0.0/0" }] } },
            { type: "portmap", capabilities: { portMappings: true } },
        ],
    }, null, 1);
}

function kubeletConfig(ctx: Context): string {
    const pki = (f: string) => ctx.path("pki", f);
    return JSON.stringify({
        apiVersion: "kubelet.config.k8s.io/v1beta1",
        kind: "KubeletConfiguration",
        // This machine has cgroups v1 (issue 40): the kubelet of 1.36 refuses it unless told.
        failCgroupV1: false,
        cgroupDriver: "cgroupfs",
        address: nodeIp(),
        readOnlyPort: 0,
        authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: pki("ca.crt") } },
        authorization: { mode: "Webhook" },
        tlsCertFile: pki("kubelet-serving.crt"),
        tlsPrivateKeyFile: pki("kubelet-serving.key"),
        clusterDNS: [CLUSTER_DNS],
        clusterDomain: "cluster.local",
        resolvConf: ctx.path("node", "resolv.conf"),
        containerRuntimeEndpoint: `unix://${CONTAINERD_SOCKET}`,
        failSwapOn: false,
        // The imported images are the only copies: never collected.
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        evictionHard: { "memory.available": "100Mi", "nodefs.available": "2%", "imagefs.available": "2%" },
        rotateCertificates: false,
        serializeImagePulls: false,
        podCIDR: POD_CIDR,
        maxPods: 110,
    }, null, 1);
}

function kubeProxyConfig(ctx: Context): string {
    return JSON.stringify({
        apiVersion: "kubeproxy.config.k8s.io/v1alpha1",
        kind: "KubeProxyConfiguration",
        clientConnection: { kubeconfig: ctx.path("pki", "kube-proxy.kubeconfig") },
        mode: "iptables",
        hostnameOverride: NODE_NAME,
        clusterCIDR: "10.244.0.0/16",
        metricsBindAddress: "127.0.0.1:10249",
        healthzBindAddress: "127.0.0.1:10256",
        // The conntrack table is the kernel's, shared with the host: left as it is.
        conntrack: { maxPerCore: 0, min: 0, tcpEstablishedTimeout: "0s", tcpCloseWaitTimeout: "0s" },
        nodePortAddresses: [`${nodeIp()}/32`],
    }, null, 1);
}

/** CoreDNS as kubeadm deploys it (k8s-app: kube-dns in kube-system, Service kube-dns), one replica. */
function corednsObjects(): object[] {
    const labels = { "k8s-app": "kube-dns" };
    const image = IMAGE_RECIPES.find((r) => r.name === "coredns")!.ref;
    return [
        { apiVersion: "v1", kind: "ServiceAccount", metadata: { name: "coredns", namespace: "kube-system" } },
        { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRole", metadata: { name: "system:coredns" }, rules: [{ apiGroups: [""], resources: ["endpoints", "services", "pods", "namespaces"], verbs: ["list", "watch"] }, { apiGroups: ["discovery.k8s.io"], resources: ["endpointslices"], verbs: ["list", "watch"] }] },
        { apiVersion: "rbac.authorization.k8s.io/v1", kind: "ClusterRoleBinding", metadata: { name: "system:coredns" }, roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "system:coredns" }, subjects: [{ kind: "ServiceAccount", name: "coredns", namespace: "kube-system" }] },
        { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "coredns", namespace: "kube-system" }, data: { Corefile: ".:53 {\n    errors\n    health {\n       lameduck 5s\n    }\n    ready\n    kubernetes cluster.local in-addr.arpa ip6.arpa {\n       pods insecure\n       fallthrough in-addr.arpa ip6.arpa\n       ttl 30\n    }\n    cache 30\n    loop\n    reload\n    loadbalance\n}\n" } },
        {
            apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "coredns", namespace: "kube-system", labels },
            spec: {
                replicas: 1, selector: { matchLabels: labels },
                template: {
                    metadata: { labels },
                    spec: {
                        serviceAccountName: "coredns", priorityClassName: "system-cluster-critical", dnsPolicy: "Default",
                        // Port 53 as uid 65532: the published image gives /coredns the file capability
                        // cap_net_bind_service; this one lowers the pod's unprivileged port start instead (a safe sysctl).
                        securityContext: { sysctls: [{ name: "net.ipv4.ip_unprivileged_port_start", value: "53" }] },
                        nodeSelector: { "kubernetes.io/hostname": NODE_NAME },
                        containers: [{
                            name: "coredns", image, imagePullPolicy: "Never", args: ["-conf", "/etc/coredns/Corefile"],
                            resources: { requests: { cpu: "100m", memory: "70Mi" }, limits: { memory: "170Mi" } },
                            volumeMounts: [{ name: "config-volume", mountPath: "/etc/coredns", readOnly: true }],
                            ports: [{ containerPort: 53, name: "dns", protocol: "UDP" }, { containerPort: 53, name: "dns-tcp", protocol: "TCP" }, { containerPort: 9153, name: "metrics", protocol: "TCP" }],
                            securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ["ALL"] }, readOnlyRootFilesystem: true },
                            livenessProbe: { httpGet: { path: "/health", port: 8080 }, initialDelaySeconds: 10, timeoutSeconds: 5 },
                            readinessProbe: { httpGet: { path: "/ready", port: 8181 } },
                        }],
                        volumes: [{ name: "config-volume", configMap: { name: "coredns", items: [{ key: "Corefile", path: "Corefile" }] } }],
                    },
                },
            },
        },
        { apiVersion: "v1", kind: "Service", metadata: { name: "kube-dns", namespace: "kube-system", labels: { ...labels, "kubernetes.io/name": "CoreDNS" } }, spec: { clusterIP: CLUSTER_DNS, selector: labels, ports: [{ name: "dns", port: 53, protocol: "UDP" }, { name: "dns-tcp", port: 53, protocol: "TCP" }, { name: "metrics", port: 9153, protocol: "TCP" }] } },
    ];
}

/** Imports each cached image into containerd's k8s.io namespace under its reference; one line each. */
export async function importImages(ctx: Context, io: StepIO, recipes: readonly ImageRecipe[] = IMAGE_RECIPES): Promise<void> {
    for (const r of recipes) {
        const b = cached(r);
        if (!b) throw new Error(`image ${r.name} is not built (bash tools/e2e/build.sh images)`);
        const t0 = process.hrtime.bigint();
        const base = r.ref.slice(0, r.ref.lastIndexOf(":"));
        await ctr(ctx, ["images", "import", "--base-name", base, b.archive], { quiet: true });
        const listed = (await ctr(ctx, ["images", "ls", "-q", `name==${r.ref}`], { quiet: true })).stdout.trim();
        if (listed !== r.ref) throw new Error(`ctr images import of ${b.archive} did not give ${r.ref} (got: ${listed || "nothing"})`);
        const pkgs = b.packages ? ` [${Object.entries(b.packages).map(([p, v]) => `${p} ${v}`).join(", ")}]` : "";
        io.result(`image ${r.ref}: ${r.product} ${r.version}${pkgs}, ${(b.bytes / 1048576).toFixed(0)} MiB, built in ${b.seconds.toFixed(0)} s (cached), imported in ${since(t0)} s${r.gap ? `; gap: ${r.gap}` : ""}`);
    }
}

/** containerd (its root in the work folder, its socket on the namespace's /run). */
export async function startContainerd(ctx: Context, io: StepIO): Promise<void> {
    const node = ctx.path("node");
    fs.mkdirSync(path.join(node, "cni"), { recursive: true });
    fs.mkdirSync(path.join(node, "containerd"), { recursive: true });
    fs.writeFileSync(path.join(node, "containerd.toml"), containerdConfig(ctx));
    fs.writeFileSync(path.join(node, "cni", "10-e2e.conflist"), cniConfig());
    fs.writeFileSync(path.join(node, "resolv.conf"), "search cluster.local\n");
    const t0 = process.hrtime.bigint();
    ctx.start("containerd", "containerd", ["--config", path.join(node, "containerd.toml")]);
    await ctx.waitFor(60, "containerd's socket", async () => (await ctr(ctx, ["version"], { allowFail: true, quiet: true })).code === 0);
    io.result(`containerd ${(await ctx.run("containerd", ["--version"], { quiet: true })).stdout.trim().split(" ")[2]} and ${(await ctx.run("runc", ["--version"], { quiet: true })).stdout.split("\n")[0]} (Debian), up in ${since(t0)} s`);
}

/** The kubelet until its Node is Ready, then kube-proxy and (router) kube-router. */
export async function joinNode(ctx: Context, io: StepIO, router = true): Promise<void> {
    const v = versions();
    const node = ctx.path("node");
    // The node's credentials: its client certificate (Node authorizer), its serving certificate, kube-proxy's, kube-router's.
    await issueCert(ctx, "kubelet", `/O=system:nodes/CN=system:node:${NODE_NAME}`);
    await issueCert(ctx, "kubelet-serving", `/CN=${NODE_NAME}`, `IP:${nodeIp()},DNS:${NODE_NAME}`);
    await issueCert(ctx, "kube-proxy", "/CN=system:kube-proxy");
    await issueCert(ctx, "kube-router", "/O=system:masters/CN=kube-router");
    for (const u of ["kubelet", "kube-proxy", "kube-router"]) writeKubeconfig(ctx, u);
    fs.writeFileSync(path.join(node, "kubelet.json"), kubeletConfig(ctx));
    fs.writeFileSync(path.join(node, "kube-proxy.json"), kubeProxyConfig(ctx));
    const t1 = process.hrtime.bigint();
    ctx.start("kubelet", ctx.bin("kubelet", v.k8s), [
        "--config", path.join(node, "kubelet.json"), "--kubeconfig", ctx.path("pki", "kubelet.kubeconfig"),
        "--hostname-override", NODE_NAME, "--node-ip", nodeIp(), "--node-labels", "ops-e2e/node=real", "--v", "2",
    ]);
    await ctx.waitFor(180, `node ${NODE_NAME} Ready`, async () => {
        const r = await ctx.kubectl(["get", "node", NODE_NAME, "-o", "jsonpath={.status.conditions[?(@.type==\"Ready\")].status}"], { allowFail: true, quiet: true });
        return r.stdout.trim() === "True";
    });
    const ready = since(t1);
    ctx.start("kube-proxy", ctx.bin("kube-proxy", v.k8s), ["--config", path.join(node, "kube-proxy.json"), "--v", "2"]);
    // kube-router reads the node it runs on: started once the node is registered (issue 40).
    if (router) {
        ctx.start("kube-router", ctx.bin("kube-router", v.kubeRouter), [
            "--kubeconfig", ctx.path("pki", "kube-router.kubeconfig"), "--hostname-override", NODE_NAME,
            "--run-firewall=true", "--run-router=false", "--run-service-proxy=false", "--enable-cni=false",
            "--metrics-port=0", "--health-port=20244", "--service-cluster-ip-range=10.96.0.0/16",
        ]);
    }
    const alloc = await ctx.kubectlJson(["get", "node", NODE_NAME]);
    io.result(`node ${NODE_NAME} (kubelet ${v.k8s}, ${nodeIp()}) Ready in ${ready} s: allocatable cpu ${alloc.status.allocatable.cpu}, memory ${alloc.status.allocatable.memory}; kube-proxy ${v.k8s} (iptables)${router ? `, kube-router ${v.kubeRouter} (firewall only)` : ""} started`);
}

/** CoreDNS: the first pod, and the proof a pod runs (started, its probes passing). */
export async function startDns(ctx: Context, io: StepIO): Promise<void> {
    fs.writeFileSync(ctx.path("coredns.json"), JSON.stringify({ apiVersion: "v1", kind: "List", items: corednsObjects() }));
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("coredns.json")]);
    const t2 = process.hrtime.bigint();
    const r = await ctx.kubectl(["-n", "kube-system", "rollout", "status", "deployment/coredns", "--timeout=180s"], { allowFail: true });
    if (r.code !== 0) {
        await ctx.kubectl(["-n", "kube-system", "logs", "deployment/coredns", "--tail", "20"], { allowFail: true });
        throw new Error("CoreDNS did not become Ready on the real node (its log above)");
    }
    io.result(`pod kube-system/coredns (${IMAGE_RECIPES.find((r) => r.name === "coredns")!.ref}) started and Ready on ${NODE_NAME} in ${since(t2)} s`);
}

/** The node: containerd, the images, the kubelet until the Node is Ready, kube-proxy, kube-router, CoreDNS. */
export async function start(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    await startContainerd(ctx, io);
    const ti = process.hrtime.bigint();
    await importImages(ctx, io);
    ctx.time("realnode-import", since(ti));
    await joinNode(ctx, io);
    ctx.time("realnode-start", since(t0));
    await startDns(ctx, io);
}

/** The namespaces whose products cannot be had here (no registry serves Elasticsearch or ClickHouse): kept on kwok. */
export const KWOK_NAMESPACES = ["search", "column-store"] as const;
const KWOK_TAINT = "ops-e2e/kwok";

/**
 * Keeps the search engine and the column store on the kwok nodes without changing what the program
 * emits: a MutatingAdmissionPolicy of the harness (GA in 1.36) gives their namespaces' pods a
 * nodeSelector for the kwok nodes and a toleration of the taint the kwok nodes get here, so every
 * other pod can only land on the real node. A cluster administrator would do the same with their
 * own admission policy; the program's objects are the render's (the compare step's check).
 */
export async function keepOnKwok(ctx: Context, io: StepIO): Promise<void> {
    const name = "ops-e2e-kwok-namespaces";
    const objects = [
        {
            apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingAdmissionPolicy", metadata: { name },
            spec: {
                failurePolicy: "Fail", reinvocationPolicy: "Never",
                matchConstraints: {
                    resourceRules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["pods"] }],
                    namespaceSelector: { matchExpressions: [{ key: "kubernetes.io/metadata.name", operator: "In", values: [...KWOK_NAMESPACES] }] },
                },
                mutations: [{
                    patchType: "JSONPatch",
                    jsonPatch: {
                        expression: `[JSONPatch{op: "add", path: "/spec/nodeSelector", value: {"type": "kwok"}}, JSONPatch{op: "add", path: "/spec/tolerations", value: (has(object.spec.tolerations) ? object.spec.tolerations : []) + [{"key": "${KWOK_TAINT}", "operator": "Exists", "effect": "NoSchedule"}]}]`,
                    },
                }],
            },
        },
        { apiVersion: "admissionregistration.k8s.io/v1", kind: "MutatingAdmissionPolicyBinding", metadata: { name }, spec: { policyName: name } },
    ];
    fs.writeFileSync(ctx.path("kwok-namespaces.json"), JSON.stringify({ apiVersion: "v1", kind: "List", items: objects }));
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("kwok-namespaces.json")]);
    // After the engine steps: prod's extra kwok nodes go, ci's comes back into use.
    await ctx.kubectl(["delete", "node", "-l", "ops-e2e/pool", "--wait", "--timeout=60s"], { quiet: true });
    await ctx.kubectl(["uncordon", "-l", "type=kwok"], { quiet: true });
    const kwokNodes = await ctx.names(["node", "-l", "type=kwok"]);
    await ctx.kubectl(["taint", "nodes", "--overwrite", "-l", "type=kwok", `${KWOK_TAINT}=true:NoSchedule`]);
    io.result(`pods of ${KWOK_NAMESPACES.join(", ")} kept on the kwok nodes (MutatingAdmissionPolicy ${name}: nodeSelector type=kwok and a toleration); ${kwokNodes.length} kwok node(s) tainted ${KWOK_TAINT}=true:NoSchedule, so every other pod runs on ${NODE_NAME}`);
}

/** The fake model API upstream, reachable from the pods at the namespace's "internet" address. */
export const upstreamUrl = () => `https://${env("E2E_INTERNET_IP")}:443/v1`;

/**
 * The e2e's copy of the ci stack file for the real node: the images the repository's recipes build
 * (the agent server; the model bridge itself instead of ci's busybox stand-in).
 */
export async function stackCopy(ctx: Context): Promise<string> {
    const file = ctx.path("realnode.yaml");
    fs.copyFileSync(ctx.path("project/Pulumi.ci.yaml"), file);
    const set = (k: string, v: string) => ctx.pulumi(["config", "set", "--config-file", file, "--stack", "ci", k, v]);
    await set("ops:agentServerImage", IMAGE_RECIPES.find((r) => r.name === "agent-server")!.ref);
    await set("ops:bridgeImage", IMAGE_RECIPES.find((r) => r.name === "model-bridge")!.ref);
    await ctx.pulumi(["config", "rm", "--config-file", file, "--stack", "ci", "ops:bridgeArgs"]);
    // The agent server's provider: the fake model API at the pods' "internet" (plain HTTP on the port their egress allows).
    await set("ops:agentServerProviderBaseUrl", (await startUpstream()).baseUrl);
    return file;
}

interface Pod {
    metadata: { name: string; namespace: string; creationTimestamp: string; ownerReferences?: Array<{ kind: string; name: string }> };
    spec: { nodeName?: string; containers: Array<{ name: string; image: string }> };
    status: {
        phase?: string;
        conditions?: Array<{ type: string; status: string; lastTransitionTime?: string }>;
        containerStatuses?: Array<{ name: string; ready: boolean; restartCount: number; state?: { running?: { startedAt: string }; waiting?: { reason?: string; message?: string }; terminated?: { reason?: string; exitCode?: number } } }>;
    };
}

const secondsBetween = (a?: string, b?: string) => (a && b ? Math.round((Date.parse(b) - Date.parse(a)) / 100) / 10 : NaN);

/** One line per pod of the stack: where it runs, its images, started and Ready after its creation. */
export async function podLines(ctx: Context, io: StepIO): Promise<{ notReady: string[] }> {
    const pods = (await ctx.kubectlJson<{ items: Pod[] }>(["get", "pods", "-A", "-l", "app.kubernetes.io/part-of=ops-environment"])).items;
    const notReady: string[] = [];
    for (const p of pods.sort((a, b) => `${a.metadata.namespace}/${a.metadata.name}`.localeCompare(`${b.metadata.namespace}/${b.metadata.name}`))) {
        const id = `${p.metadata.namespace}/${p.metadata.name}`;
        if (p.status.phase === "Succeeded") continue;
        const ready = p.status.conditions?.find((c) => c.type === "Ready");
        const started = (p.status.containerStatuses ?? []).map((c) => c.state?.running?.startedAt).filter(Boolean).sort()[0];
        const restarts = (p.status.containerStatuses ?? []).reduce((n, c) => n + c.restartCount, 0);
        const images = [...new Set(p.spec.containers.map((c) => c.image))].join(", ");
        const where = p.spec.nodeName === NODE_NAME ? "real node" : `kwok (${p.spec.nodeName ?? "unscheduled"})`;
        if (ready?.status !== "True") {
            const why = (p.status.containerStatuses ?? []).map((c) => `${c.name}: ${c.state?.waiting?.reason ?? c.state?.terminated?.reason ?? (c.ready ? "ready" : "not ready")}${c.state?.waiting?.message ? ` (${c.state.waiting.message.slice(0, 200)})` : ""}`).join("; ");
            notReady.push(`${id}: ${why || p.status.phase}`);
            io.result(`workload ${id} [${where}] ${images}: NOT READY (${why || p.status.phase})`);
            // Its containers' last words (the pods' logs live in the run's namespace only).
            for (const c of p.status.containerStatuses ?? []) {
                for (const prev of c.restartCount ? ["--previous"] : []) await ctx.kubectl(["-n", p.metadata.namespace, "logs", p.metadata.name, "-c", c.name, "--tail", "15", prev], { allowFail: true });
                await ctx.kubectl(["-n", p.metadata.namespace, "logs", p.metadata.name, "-c", c.name, "--tail", "15"], { allowFail: true });
            }
            continue;
        }
        io.result(`workload ${id} [${where}] ${images}: started ${secondsBetween(p.metadata.creationTimestamp, started)} s, ready ${secondsBetween(p.metadata.creationTimestamp, ready.lastTransitionTime)} s after creation${restarts ? `, ${restarts} restart(s)` : ""}`);
    }
    return { notReady };
}

/**
 * `pulumi up` of ci onto the cluster with the real node (the stack copy above): every Deployment
 * Available, every StatefulSet ready, the render's Jobs complete, and a line per pod.
 */
export async function up(ctx: Context, io: StepIO): Promise<void> {
    // A volume provisioner makes each volume writable by the pod's user (local-path's 0777); the
    // stand-in's hostPath folders are made so here (the kubelet would create them root's 0755).
    const pvs = JSON.parse(fs.readFileSync(ctx.path("volumes.json"), "utf8")).items as Array<{ spec: { hostPath: { path: string } } }>;
    for (const pv of pvs) {
        fs.mkdirSync(pv.spec.hostPath.path, { recursive: true });
        fs.chmodSync(pv.spec.hostPath.path, 0o777);
    }
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("volumes.json")], { quiet: true });
    const file = await stackCopy(ctx);
    const t0 = process.hrtime.bigint();
    const r = await ctx.engine("up", "ci", "realnode-up", ["--config-file", file]);
    const took = since(t0);
    ctx.time("realnode-up", took);
    const lines = await podLines(ctx, io);
    if (!r.ok) throw new Error(`pulumi up of ci onto the real node failed after ${took} s: ${(r.error ?? "").slice(-1500)}`);
    io.result(`pulumi up of ci (images of the real node: ${file}): ${Object.entries(r.summary).map(([k, v]) => `${k} ${v}`).join(", ")} in ${took} s`);
    if (lines.notReady.length) throw new Error(`${lines.notReady.length} pod(s) not Ready: ${lines.notReady.join(" | ")}`);
}

let upstream: FakeModelApi | undefined;

/** The fake model API the agent server's provider calls, on the namespace's "internet" address, port 443 (the pods' egress allows 443 there). */
export async function startUpstream(): Promise<FakeModelApi> {
    upstream ??= await startFakeModelApi(env("E2E_INTERNET_IP"), 443);
    return upstream;
}

export async function stopUpstream(): Promise<void> {
    await upstream?.close();
    upstream = undefined;
}

/** `pulumi destroy` of ci from the real node: nothing of the stack left (the node's pods gone with it). */
export async function destroy(ctx: Context, io: StepIO): Promise<void> {
    const t0 = process.hrtime.bigint();
    const r = await ctx.engine("destroy", "ci", "realnode-destroy", ["--config-file", ctx.path("realnode.yaml")]);
    if (!r.ok) throw new Error(`pulumi destroy of ci failed: ${(r.error ?? "").slice(-1500)}`);
    await ctx.waitFor(180, "the stack's pods gone from the real node", async () => (await ctx.names(["pods", "-A", "-l", "app.kubernetes.io/part-of=ops-environment"])).length === 0);
    const took = since(t0);
    ctx.time("realnode-teardown", took);
    io.result(`pulumi destroy of ci: ${Object.entries(r.summary).map(([k, v]) => `${k} ${v}`).join(", ")}; no pod of the stack left, in ${took} s`);
}

/** The phase times of the real node (speed lines): image builds (cold, from the cache's records), node start, up, paths, teardown. */
export function phaseLines(ctx: Context): string[] {
    const t = (k: string) => ctx.times.get(k)?.reduce((a, b) => a + b, 0);
    const built = IMAGE_RECIPES.map((r) => cached(r)).filter((b): b is NonNullable<typeof b> => !!b);
    const fmt = (v: number | undefined) => (v === undefined ? "not run" : `${v.toFixed(1)} s`);
    return [
        `realnode: image builds cold ${built.reduce((a, b) => a + b.seconds, 0).toFixed(0)} s for ${built.length} images (${built.map((b) => `${b.name} ${b.seconds.toFixed(0)} s`).join(", ")}); this run: none rebuilt (cached by recipe and inputs), all imported in ${fmt(t("realnode-import"))}`,
        `realnode: node start ${fmt(t("realnode-start"))}, pulumi up ${fmt(t("realnode-up"))}, paths ${fmt(t("realnode-paths"))}, teardown ${fmt(t("realnode-teardown"))}`,
    ];
}
