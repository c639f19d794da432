/**
 * STAND-IN (e2e only) for the servers behind the add-ons' admission webhooks and aggregated API,
 * whose pods kwok only pretends to run: ingress-nginx's admission webhook, cert-manager's webhook,
 * the Prometheus operator's rule webhooks, the VPA admission controller, metrics-server's
 * metrics.k8s.io APIService. The API server calls each at its Service's ClusterIP and port (the
 * ClusterIP service resolver); without an answer every Ingress and issuer is refused (failurePolicy
 * Fail) and namespace deletion waits on the unavailable metrics.k8s.io group.
 *
 * Every second it reads the ValidatingWebhookConfigurations, MutatingWebhookConfigurations and
 * APIServices; for each Service one of them names it adds the Service's ClusterIP to the loopback
 * interface (`ip addr add <ip>/32 dev lo`, root with NET_ADMIN), serves HTTPS there on the Service's
 * port with a certificate for `<service>.<namespace>.svc` signed by a CA of its own, and writes that
 * CA into the configuration's caBundle: what kube-webhook-certgen's patch Job (ingress-nginx, the
 * Prometheus operator, the VPA) and cert-manager's cainjector do on a real cluster (there: the CA of
 * the Secret the create Job or the webhook made). It answers:
 *  - an AdmissionReview: allowed, unchanged (no patch for a mutating webhook);
 *  - metrics.k8s.io/v1beta1: discovery (nodes and pods, get and list) and empty lists.
 * It does NOT do what the real servers do: no validation of nginx configuration or of Ingress
 * annotations, no cert-manager defaulting or validation of issuers and certificates, no check of
 * PrometheusRule expressions, no VPA recommendations applied to pods, no metrics (empty lists).
 *
 * Usage: webhookStandIn.ts <kubectl> <kubeconfig> <folder>. It writes <folder>/addresses (one per
 * line, as it adds them; run.sh removes any left) and <folder>/status.json (served Services, requests
 * answered); on SIGTERM or SIGINT it removes the addresses it added and exits.
 */
import { execFileSync, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as https from "node:https";
import * as path from "node:path";
import { answer } from "./webhookAnswer";

const [kubectlBin, kubeconfig, folder] = process.argv.slice(2);
if (!kubectlBin || !kubeconfig || !folder) {
    console.error("usage: webhookStandIn.ts <kubectl> <kubeconfig> <folder>");
    process.exit(2);
}
fs.mkdirSync(folder, { recursive: true });

interface ServiceRef {
    namespace: string;
    name: string;
    port: number;
}
interface Served extends ServiceRef {
    ip: string;
    server: https.Server;
    reviews: number;
    metrics: number;
    by: string[];
}

const added: string[] = [];
const served = new Map<string, Served>();
const failed = new Map<string, string>();
const key = (s: ServiceRef, ip: string) => `${s.namespace}/${s.name}:${s.port}@${ip}`;

function kubectl(args: string[], input?: string): string {
    return execFileSync(kubectlBin, ["--kubeconfig", kubeconfig, ...args], { input, encoding: "utf8", stdio: ["pipe", "pipe", "pipe"], maxBuffer: 64 << 20 });
}

function openssl(args: string[]): void {
    const r = spawnSync("openssl", args, { cwd: folder, encoding: "utf8" });
    if (r.status !== 0) throw new Error(`openssl ${args.join(" ")}: ${r.stderr}`);
}

function ensureCa(): string {
    if (!fs.existsSync(path.join(folder, "ca.crt"))) {
        openssl(["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1", "-keyout", "ca.key", "-out", "ca.crt", "-subj", "/CN=ops-e2e-webhook-standin-ca"]);
    }
    return fs.readFileSync(path.join(folder, "ca.crt")).toString("base64");
}

function leaf(s: ServiceRef, ip: string): { key: Buffer; cert: Buffer } {
    const n = `${s.namespace}-${s.name}-${s.port}`;
    const host = `${s.name}.${s.namespace}.svc`;
    openssl(["req", "-newkey", "rsa:2048", "-nodes", "-keyout", `${n}.key`, "-out", `${n}.csr`, "-subj", `/CN=${host}`]);
    fs.writeFileSync(path.join(folder, `${n}.ext`), `subjectAltName=DNS:${host},DNS:${host}.cluster.local,IP:${ip}\nextendedKeyUsage=serverAuth\n`);
    openssl(["x509", "-req", "-in", `${n}.csr`, "-CA", "ca.crt", "-CAkey", "ca.key", "-CAcreateserial", "-days", "1", "-out", `${n}.crt`, "-extfile", `${n}.ext`]);
    return { key: fs.readFileSync(path.join(folder, `${n}.key`)), cert: fs.readFileSync(path.join(folder, `${n}.crt`)) };
}

/** Adds the address to lo unless an interface of this host has it already (another run, or the host itself). */
function addAddress(ip: string): void {
    const has = execFileSync("ip", ["-o", "addr", "show", "to", `${ip}/32`], { encoding: "utf8" }).trim();
    if (has) throw new Error(`${ip} is already on this host (${has.split(/\s+/).slice(1, 2).join("")}): another run or the host uses it; not taken`);
    execFileSync("ip", ["addr", "add", `${ip}/32`, "dev", "lo"]);
    added.push(ip);
    fs.appendFileSync(path.join(folder, "addresses"), `${ip}\n`);
    console.log(`added ${ip}/32 to lo`);
}

function removeAddress(ip: string): void {
    spawnSync("ip", ["addr", "del", `${ip}/32`, "dev", "lo"]);
    console.log(`removed ${ip}/32 from lo`);
}

function removeAddresses(): void {
    for (const ip of added.splice(0)) removeAddress(ip);
}

/** Serves a Service at its ClusterIP (once per Service and address). */
async function serve(ref: ServiceRef, ip: string | undefined, by: string): Promise<void> {
    if (!ip || ip === "None") return;
    const k = key(ref, ip);
    const known = served.get(k);
    if (known) {
        if (!known.by.includes(by)) known.by.push(by);
        return;
    }
    if (failed.has(k)) return;
    try {
        if (!added.includes(ip)) addAddress(ip);
        const { key: tlsKey, cert } = leaf(ref, ip);
        const s = { ...ref, ip, reviews: 0, metrics: 0, by: [by] } as Served;
        const server = https.createServer({ key: tlsKey, cert }, (req, res) => {
            const chunks: Buffer[] = [];
            req.on("data", (c: Buffer) => chunks.push(c));
            req.on("end", () => {
                let out: ReturnType<typeof answer>;
                try {
                    out = answer(req.method ?? "GET", req.url ?? "/", Buffer.concat(chunks).toString("utf8"));
                    if (out.counts === "review") s.reviews++;
                    if (out.counts === "metrics") s.metrics++;
                } catch (err) {
                    out = { code: 400, json: { kind: "Status", apiVersion: "v1", status: "Failure", code: 400, message: String(err) } };
                }
                res.writeHead(out.code, { "content-type": "application/json" }).end(JSON.stringify(out.json));
            });
        });
        s.server = server;
        await new Promise<void>((resolve, reject) => {
            server.once("error", reject);
            server.listen(ref.port, ip, () => resolve());
        });
        served.set(k, s);
        console.log(`serving ${k} at https://${ip}:${ref.port} for ${by}`);
    } catch (err) {
        failed.set(k, String(err instanceof Error ? err.message : err));
        console.log(`cannot serve ${k}: ${failed.get(k)}`);
    }
}

interface WebhookConfig {
    kind: string;
    metadata: { name: string };
    webhooks?: Array<{ name: string; clientConfig: { service?: { namespace: string; name: string; port?: number }; caBundle?: string } }>;
    spec?: { service?: { namespace: string; name: string; port?: number }; caBundle?: string; insecureSkipTLSVerify?: boolean };
}

async function round(ca: string): Promise<void> {
    const all = (JSON.parse(kubectl(["get", "validatingwebhookconfigurations,mutatingwebhookconfigurations,apiservices,services", "-A", "-o", "json"])) as { items: Array<WebhookConfig & { metadata: { namespace?: string }; spec?: { clusterIP?: string } }> }).items;
    const ips = new Map(all.filter((o) => o.kind === "Service").map((o) => [`${o.metadata.namespace}/${o.metadata.name}`, o.spec?.clusterIP]));
    const ipOf = (svc: { namespace: string; name: string }) => ips.get(`${svc.namespace}/${svc.name}`);
    const wanted = new Set<string>();
    const want = async (svc: { namespace: string; name: string; port?: number }, by: string) => {
        const ref = { namespace: svc.namespace, name: svc.name, port: svc.port ?? 443 };
        const ip = ipOf(svc);
        if (ip) wanted.add(key(ref, ip));
        await serve(ref, ip, by);
    };
    for (const o of all.filter((x) => x.kind !== "Service")) {
        const resource = o.kind === "APIService" ? "apiservice" : o.kind.toLowerCase();
        const by = `${o.kind} ${o.metadata.name}`;
        if (o.kind === "APIService") {
            const svc = o.spec?.service;
            if (!svc) continue;
            await want(svc, by);
            if (!o.spec?.insecureSkipTLSVerify && o.spec?.caBundle !== ca) {
                kubectl(["patch", resource, o.metadata.name, "--type=merge", "--field-manager", "e2e-webhook-standin", "-p", JSON.stringify({ spec: { caBundle: ca } })]);
                console.log(`caBundle of ${by} set`);
            }
            continue;
        }
        const patch: unknown[] = [];
        for (const [i, w] of (o.webhooks ?? []).entries()) {
            const svc = w.clientConfig.service;
            if (!svc) continue;
            await want(svc, by);
            if (w.clientConfig.caBundle !== ca) patch.push({ op: "add", path: `/webhooks/${i}/clientConfig/caBundle`, value: ca });
        }
        if (patch.length) {
            kubectl(["patch", resource, o.metadata.name, "--type=json", "--field-manager", "e2e-webhook-standin", "-p", JSON.stringify(patch)]);
            console.log(`caBundle of ${by} set (${patch.length} webhooks)`);
        }
    }
    // A Service deleted (or given another address): its server and address go.
    for (const [k, s] of served) {
        if (wanted.has(k)) continue;
        s.server.close();
        served.delete(k);
        const i = added.indexOf(s.ip);
        if (i >= 0 && ![...served.values()].some((o) => o.ip === s.ip)) {
            added.splice(i, 1);
            removeAddress(s.ip);
        }
        console.log(`stopped serving ${k}`);
    }
    const status = { served: [...served.values()].map(({ server, ...rest }) => rest), failed: Object.fromEntries(failed) };
    fs.writeFileSync(path.join(folder, "status.json.tmp"), JSON.stringify(status, null, 1));
    fs.renameSync(path.join(folder, "status.json.tmp"), path.join(folder, "status.json"));
}

async function main(): Promise<void> {
    const ca = ensureCa();
    for (const sig of ["SIGTERM", "SIGINT"] as const) {
        process.on(sig, () => {
            removeAddresses();
            process.exit(0);
        });
    }
    process.on("exit", removeAddresses);
    for (;;) {
        try {
            await round(ca);
        } catch (err) {
            console.log(`round: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
        }
        await new Promise((r) => setTimeout(r, 1000));
    }
}

void main();
