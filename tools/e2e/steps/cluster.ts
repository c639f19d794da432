/**
 * The control plane on loopback, without containers: the toolchain, the offline render, a PKI,
 * etcd, kube-apiserver, the controller manager, the scheduler and kwok's fake node, the CRDs the
 * render uses and pre-bound volumes for its claims.
 */
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import type { Context, StepIO } from "../harness/context";
import { kindsOf } from "./objects";
import { standInStorageClass } from "../objects";

export const STACK = "ci";

export async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.on("error", reject);
        s.listen(0, "127.0.0.1", () => {
            const port = (s.address() as net.AddressInfo).port;
            s.close(() => resolve(port));
        });
    });
}

export async function toolchain(ctx: Context, io: StepIO): Promise<void> {
    const missing = ctx.missing(ctx.tools.required);
    if (!fs.existsSync(ctx.kwokStages()) || fs.statSync(ctx.kwokStages()).size === 0) missing.push(`kwok-${ctx.tools.kwok}/stages.yaml`);
    if (missing.length) throw new Error(`not in ${ctx.cache}: ${missing.join(" ")}; build with: npm run e2e:build`);
    io.result(`${ctx.cache}: ${ctx.tools.required.map(([n, v]) => `${n}-${v}`).join(" ")}`);
}

/** The offline render of a stack into <work>/<out> (npm run render). */
export async function renderStack(ctx: Context, stack: string, out: string): Promise<string> {
    await ctx.tsxRun("cli/render.ts", ["--stack", stack, "--out", ctx.path(out)]);
    return ctx.path(out, "manifests.yaml");
}

export async function render(ctx: Context, io: StepIO): Promise<void> {
    const m = await renderStack(ctx, STACK, "render");
    const n = fs.readFileSync(m, "utf8").split("\n").filter((l) => l.startsWith("kind: ")).length;
    io.result(`${n} objects in the offline render of stack ${STACK}`);
}

/** kubeconfig of one client certificate (JSON: kubectl reads it as YAML). */
function kubeconfig(server: string, dir: string, user: string): string {
    const b64 = (f: string) => fs.readFileSync(path.join(dir, f)).toString("base64");
    return JSON.stringify({
        apiVersion: "v1",
        kind: "Config",
        clusters: [{ name: "e2e", cluster: { server, "certificate-authority-data": b64("ca.crt") } }],
        users: [{ name: user, user: { "client-certificate-data": b64(`${user}.crt`), "client-key-data": b64(`${user}.key`) } }],
        contexts: [{ name: "e2e", context: { cluster: "e2e", user } }],
        "current-context": "e2e",
    }, null, 1);
}

/** A certificate of the run's CA in <work>/pki (NAME.key, NAME.crt): a server's with SANs, else a client's. */
export async function issueCert(ctx: Context, name: string, subject: string, san?: string): Promise<void> {
    const dir = ctx.path("pki");
    const ssl = (...args: string[]) => ctx.run("openssl", args, { cwd: dir });
    await ssl("req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${name}.key`, "-out", `${name}.csr`, "-subj", subject);
    fs.writeFileSync(path.join(dir, `${name}.ext`), san ? `subjectAltName=${san}\nextendedKeyUsage=serverAuth\n` : "extendedKeyUsage=clientAuth\n");
    await ssl("x509", "-req", "-in", `${name}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-out", `${name}.crt`, "-extfile", `${name}.ext`);
}

/** A kubeconfig of one client certificate of <work>/pki, for this run's API server. */
export function writeKubeconfig(ctx: Context, user: string): string {
    const file = ctx.path("pki", `${user}.kubeconfig`);
    fs.writeFileSync(file, kubeconfig(`https://127.0.0.1:${ctx.ports.api}`, ctx.path("pki"), user));
    return file;
}

/**
 * The real node's address (tools/e2e/namespace.sh NODE_IP, exported by run.sh): the run is in its
 * own network namespace, where the API server also listens on it (pods reach it there).
 */
export const nodeIp = () => process.env.E2E_NODE_IP ?? "";

/** A CA, the API server's serving certificate and one client certificate per component. */
export async function pki(ctx: Context, io: StepIO): Promise<void> {
    const dir = ctx.path("pki");
    await ctx.run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=ops-e2e-ca"], { cwd: dir });
    const ip = nodeIp();
    await issueCert(ctx, "apiserver", "/CN=kube-apiserver", `IP:127.0.0.1,IP:10.96.0.1,${ip ? `IP:${ip},` : ""}DNS:localhost,DNS:kubernetes,DNS:kubernetes.default,DNS:kubernetes.default.svc,DNS:kubernetes.default.svc.cluster.local`);
    const clients: Array<[string, string]> = [["admin", "/O=system:masters/CN=ops-e2e-admin"], ["controller-manager", "/CN=system:kube-controller-manager"], ["scheduler", "/CN=system:kube-scheduler"], ["kwok", "/O=system:masters/CN=kwok"], ["apiserver-kubelet-client", "/O=system:masters/CN=kube-apiserver-kubelet-client"]];
    for (const [name, subject] of clients) await issueCert(ctx, name, subject);
    await ctx.run("openssl", ["genrsa", "-out", "sa.key", "2048"], { cwd: dir });
    await ctx.run("openssl", ["rsa", "-in", "sa.key", "-pubout", "-out", "sa.pub"], { cwd: dir });
    for (const c of ["admin", "controller-manager", "scheduler", "kwok"]) writeKubeconfig(ctx, c);
    io.result(`CA, serving certificate for 127.0.0.1:${ctx.ports.api}${ip ? ` and ${ip}` : ""}, client certificates: ${clients.map(([n]) => n).join(", ")}`);
}

const httpOk = async (url: string) => (await fetch(url).catch(() => undefined))?.ok === true;

export async function etcd(ctx: Context, io: StepIO): Promise<void> {
    const { etcd: port, etcdPeer: peer } = ctx.ports;
    ctx.start("etcd", ctx.bin("etcd", ctx.tools.etcd), [
        "--name", "e2e", "--data-dir", ctx.path("etcd"),
        "--listen-client-urls", `http://127.0.0.1:${port}`, "--advertise-client-urls", `http://127.0.0.1:${port}`,
        "--listen-peer-urls", `http://127.0.0.1:${peer}`, "--initial-advertise-peer-urls", `http://127.0.0.1:${peer}`,
        "--initial-cluster", `e2e=http://127.0.0.1:${peer}`, "--unsafe-no-fsync",
    ]);
    await ctx.waitFor(60, "etcd /health", () => httpOk(`http://127.0.0.1:${port}/health`));
    io.result(`etcd ${await (await fetch(`http://127.0.0.1:${port}/version`)).text()} on 127.0.0.1:${port}`);
}

export async function apiserver(ctx: Context, io: StepIO): Promise<void> {
    const p = (f: string) => ctx.path("pki", f);
    // In the run's own network namespace (run.sh) the API server also listens on the node's address,
    // which the kubernetes Service's endpoint names (pods reach it there); it reaches the kubelet there.
    const ip = nodeIp();
    const where = ip
        ? ["--bind-address", "0.0.0.0", "--advertise-address", ip, "--kubelet-preferred-address-types", "InternalIP", "--kubelet-client-certificate", p("apiserver-kubelet-client.crt"), "--kubelet-client-key", p("apiserver-kubelet-client.key")]
        : ["--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--endpoint-reconciler-type", "none"];
    ctx.start("kube-apiserver", ctx.bin("kube-apiserver", ctx.tools.k8s), [
        "--etcd-servers", `http://127.0.0.1:${ctx.ports.etcd}`, ...where,
        "--secure-port", String(ctx.ports.api), "--tls-cert-file", p("apiserver.crt"), "--tls-private-key-file", p("apiserver.key"),
        "--client-ca-file", p("ca.crt"), "--authorization-mode", "Node,RBAC", "--anonymous-auth=false",
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-account-key-file", p("sa.pub"), "--service-account-signing-key-file", p("sa.key"),
        "--service-cluster-ip-range", "10.96.0.0/16", "--profiling=false",
        // As kubeadm sets it: privileged and hostProcess fixtures reach admission instead of validation.
        "--allow-privileged=true",
    ]);
    await ctx.waitFor(120, "kube-apiserver /readyz", async () => (await ctx.kubectl(["get", "--raw", "/readyz"], { allowFail: true, quiet: true })).code === 0);
    const v = JSON.parse((await ctx.kubectl(["get", "--raw", "/version"], { quiet: true })).stdout).gitVersion;
    if (v !== `v${ctx.tools.k8s}`) throw new Error(`/version reports ${v}, expected v${ctx.tools.k8s}`);
    io.result(`kube-apiserver ${v} on https://127.0.0.1:${ctx.ports.api} (client certificates, RBAC)`);
}

export async function controllers(ctx: Context, io: StepIO): Promise<void> {
    const p = (f: string) => ctx.path("pki", f);
    ctx.start("kube-controller-manager", ctx.bin("kube-controller-manager", ctx.tools.k8s), [
        "--kubeconfig", p("controller-manager.kubeconfig"), "--secure-port", "0", "--leader-elect=false",
        "--service-account-private-key-file", p("sa.key"), "--root-ca-file", p("ca.crt"), "--use-service-account-credentials",
    ]);
    ctx.start("kube-scheduler", ctx.bin("kube-scheduler", ctx.tools.k8s), ["--kubeconfig", p("scheduler.kubeconfig"), "--secure-port", "0", "--leader-elect=false"]);
    ctx.start("kwok", ctx.bin("kwok", ctx.tools.kwok), [
        "--kubeconfig", p("kwok.kubeconfig"), "--config", ctx.kwokStages(),
        "--manage-nodes-with-annotation-selector", "kwok.x-k8s.io/node=fake", "--node-lease-duration-seconds", "40",
    ]);
    await ctx.waitFor(60, "the default ServiceAccount (controller manager)", async () => (await ctx.kubectl(["-n", "default", "get", "serviceaccount", "default"], { allowFail: true, quiet: true })).code === 0);
    io.result(`kube-controller-manager, kube-scheduler, kwok ${ctx.tools.kwok} running`);
}

export async function node(ctx: Context, io: StepIO): Promise<void> {
    await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["standins", ctx.path("render/manifests.yaml"), ctx.path("render/node/pool.yaml"), ctx.path("render/node/kubelet-config.yaml"), ctx.path("volumes"), ctx.work]);
    // Created with its status, as a registering kubelet does.
    await ctx.kubectl(["create", "-f", ctx.path("node.json")]);
    await ctx.kubectl(["wait", "--for=condition=Ready", "node", "-l", "type=kwok", "--timeout=60s"]);
    const r = await ctx.kubectl(["get", "node", "-l", "type=kwok", "-o", "jsonpath={range .items[*]}{.metadata.name} Ready, allocatable cpu {.status.allocatable.cpu} memory {.status.allocatable.memory} ephemeral-storage {.status.allocatable.ephemeral-storage}{end}"]);
    io.result(r.stdout.trim());
}

export function crdSchemas(ctx: Context): string {
    return process.env.E2E_CRD_SCHEMAS ?? path.join(ctx.repo, "../shared/reference/k8s-schemas/crds-deployed.json.gz");
}

export async function crds(ctx: Context, io: StepIO): Promise<void> {
    const schemas = crdSchemas(ctx);
    if (!fs.existsSync(schemas)) throw new Error(`${schemas} is missing: the e2e needs shared/ beside the repository`);
    const r = await ctx.tsxRun(path.join(ctx.e2eDir, "cli.ts"), ["crds", ctx.path("render/manifests.yaml"), schemas, ctx.path("crds.json")]);
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("crds.json")]);
    await ctx.kubectl(["wait", "--for=condition=Established", "crd", "-l", "app.kubernetes.io/managed-by=ops-e2e", "--timeout=60s"]);
    fs.rmSync(ctx.path("kube-cache"), { recursive: true, force: true });
    io.result(`${r.stdout.trim()} (from ${path.basename(schemas)})`);
}

export async function volumes(ctx: Context, io: StepIO): Promise<void> {
    // Before any claim: the default class a claim without one is given (objects.ts standInStorageClass).
    fs.writeFileSync(ctx.path("storageclass.json"), JSON.stringify(standInStorageClass()));
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("storageclass.json")]);
    await ctx.kubectl(["apply", "--server-side", "--field-manager", "ops-e2e", "-f", ctx.path("volumes.json")]);
    const n = (await ctx.names(["pv", "-l", "ops-e2e/stand-in=storage"])).length;
    io.result(`${n} PersistentVolumes pre-bound to the stack's claims (no volume provisioner here), default StorageClass ${standInStorageClass().metadata!.name} (allowVolumeExpansion)`);
}

/** Objects of the stack still on the cluster, for the kinds of a render. */
export async function leftOf(ctx: Context, manifests: string): Promise<string[]> {
    return ctx.names([kindsOf(manifests).join(","), "-A", "-l", "app.kubernetes.io/part-of=ops-environment"]);
}
