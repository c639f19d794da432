import { test } from "node:test";
import * as assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as http from "node:http";
import type { AddressInfo } from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { all, containersOf, find, podSpecOf, renderStack, qosPart } from "./render";
import { mountedScript } from "./backups/mounted";
import { FORMED_MARKER, nodeSettings, readinessScript, settingsCopyStep } from "../components/searchEngine/nodeConfig";
import { offlineStackConfig } from "../tools/genGitops";

const NS = "search";
const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);
const bodiesOf = (r: any) => {
    const job: any = all(r, "Job").find((j) => j.metadata?.namespace === NS)!;
    const volume = podSpecOf(job).volumes.find((v: any) => v.name === "bodies");
    return { job, bodies: find(r, "ConfigMap", volume.configMap.name, NS).data };
};

test("prod: a StatefulSet of 3 behind a headless service (stable per-pod names) and a client service", async () => {
    const r = await renderStack("prod");
    const sts = find(r, "StatefulSet", "search", NS);
    assert.equal(sts.spec.replicas, 3);
    assert.equal(sts.spec.serviceName, "search-headless");
    const headless = find(r, "Service", "search-headless", NS);
    assert.equal(headless.spec.clusterIP, "None");
    assert.deepEqual(headless.spec.selector, sts.spec.selector.matchLabels);
    assert.deepEqual(headless.spec.ports.map((p: any) => p.port).sort(), [9200, 9300]);
    const client = find(r, "Service", "search", NS);
    assert.notEqual(client.spec.clusterIP, "None");
    assert.deepEqual(client.spec.ports.map((p: any) => p.port), [9200]);
    for (const [k, v] of Object.entries(client.spec.selector)) assert.equal(sts.spec.template.metadata.labels[k], v);
    const yml = find(r, "ConfigMap", "search-config", NS).data["elasticsearch.yml"];
    assert.match(yml, /discovery\.seed_hosts: \["search-headless"\]/);
    assert.match(yml, /cluster\.initial_master_nodes: \["search-0", "search-1", "search-2"\]/);
});

test("prod: heap 2g (ES_JAVA_OPTS), cpu limit 4, memory limit 4096Mi (section 8.1)", async () => {
    const r = await renderStack("prod");
    const c = find(r, "StatefulSet", "search", NS).spec.template.spec.containers[0];
    assert.equal(env(c, "ES_JAVA_OPTS").value, "-Xms2g -Xmx2g");
    assert.equal(c.resources.limits.cpu, "4");
    assert.equal(c.resources.limits.memory, "4096Mi");
    for (const x of containersOf(find(r, "StatefulSet", "search", NS))) assert.deepEqual(qosPart(x.resources.requests), qosPart(x.resources.limits), `${x.name}: Guaranteed QoS in prod`);
    assert.ok(c.readinessProbe && c.livenessProbe && c.startupProbe);
    assert.ok(c.lifecycle.preStop);
});

test("no autoscaler on the StatefulSet; a disruption budget only with more than one node", async () => {
    const prod = await renderStack("prod");
    assert.equal(all(prod, "HorizontalPodAutoscaler").filter((h) => h.metadata?.namespace === NS).length, 0);
    const pdb = find(prod, "PodDisruptionBudget", "search", NS);
    assert.deepEqual(pdb.spec.selector.matchLabels, find(prod, "StatefulSet", "search", NS).spec.selector.matchLabels);
    const dev = await renderStack("dev");
    assert.equal(find(dev, "StatefulSet", "search", NS).spec.replicas, 1);
    assert.equal(all(dev, "PodDisruptionBudget").filter((p) => p.metadata?.namespace === NS).length, 0);
    assert.match(find(dev, "ConfigMap", "search-config", NS).data["elasticsearch.yml"], /discovery\.type: single-node/);
});

test("dev: fs repository at path.repo, with a volume mounted there and the same location in the repository body", async () => {
    const r = await renderStack("dev");
    const yml = find(r, "ConfigMap", "search-config", NS).data["elasticsearch.yml"];
    const repo = /path\.repo: \["([^"]+)"\]/.exec(yml)?.[1];
    assert.ok(repo, "path.repo is set");
    const sts = find(r, "StatefulSet", "search", NS);
    const mount = sts.spec.template.spec.containers[0].volumeMounts.find((m: any) => m.mountPath === repo);
    assert.ok(mount, "a volume is mounted at path.repo");
    const volume = sts.spec.template.spec.volumes.find((v: any) => v.name === mount.name);
    assert.ok(volume.persistentVolumeClaim, "the snapshot location is a persistent volume");
    const { bodies } = bodiesOf(r);
    assert.deepEqual(JSON.parse(bodies["repository.json"]), { type: "fs", settings: { location: repo } });
});

test("prod: s3 repository on the object store; its keys enter the keystore through the init container from a Secret", async () => {
    const r = await renderStack("prod");
    const sts = find(r, "StatefulSet", "search", NS);
    const init = sts.spec.template.spec.initContainers[0];
    const script = init.command.join(" ");
    assert.match(script, /elasticsearch-keystore add --stdin --force s3\.client\.default\.access_key/);
    assert.match(script, /elasticsearch-keystore add --stdin --force s3\.client\.default\.secret_key/);
    for (const name of ["S3_ACCESS_KEY", "S3_SECRET_KEY"]) {
        const e = env(init, name);
        assert.equal(e.value, undefined, `${name} is not a literal`);
        assert.equal(e.valueFrom.secretKeyRef.name, "search-snapshot-s3");
    }
    const { bodies } = bodiesOf(r);
    const repo = JSON.parse(bodies["repository.json"]);
    assert.equal(repo.type, "s3");
    assert.equal(repo.settings.bucket, "search-snapshots");
    assert.equal(repo.settings.client, "default");
    assert.ok(repo.settings.endpoint);
    // egress to the object store's namespace on its port
    const np = find(r, "NetworkPolicy", "search", NS);
    assert.ok(np.spec.egress.some((e: any) => e.to.some((t: any) => t.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "data") && e.ports.some((p: any) => p.port === 9000)));
});

test("security on: a generated password for elastic in a Secret, never a literal; transport TLS between nodes", async () => {
    const r = await renderStack("prod");
    const secret = find(r, "Secret", "search-elastic", NS);
    assert.equal(secret.stringData.username, "elastic");
    assert.equal(secret.stringData.password.length, 24);
    const yml = find(r, "ConfigMap", "search-config", NS).data["elasticsearch.yml"];
    assert.match(yml, /xpack\.security\.enabled: true/);
    assert.match(yml, /xpack\.security\.transport\.ssl\.enabled: true/);
    for (const c of containersOf(find(r, "StatefulSet", "search", NS))) {
        const e = env(c, "ELASTIC_PASSWORD");
        if (e) assert.equal(e.valueFrom.secretKeyRef.key, "password");
    }
    const tlsSecret = find(r, "Secret", "search-transport-tls", NS);
    assert.deepEqual(Object.keys(tlsSecret.stringData).sort(), ["ca.crt", "tls.crt", "tls.key"]);
});

test("security off through config: no password, no role, no authentication in the jobs", async () => {
    const r = await renderStack("dev", { searchEngineSecurityEnabled: false });
    assert.deepEqual(r.errors, []);
    assert.match(find(r, "ConfigMap", "search-config", NS).data["elasticsearch.yml"], /xpack\.security\.enabled: false/);
    assert.equal(r.objects.find((o) => o.kind === "Secret" && o.metadata?.name === "search-elastic"), undefined);
    const { job, bodies } = bodiesOf(r);
    assert.equal(bodies["role.json"], undefined);
    assert.equal(env(podSpecOf(job).containers[0], "SEARCH_PASSWORD"), undefined);
});

test("the lifecycle policy body has the values of sections 2.10 and 8.1", async () => {
    const r = await renderStack("prod");
    const { bodies } = bodiesOf(r);
    assert.deepEqual(JSON.parse(bodies["policy.json"]), {
        schedule: "0 30 1 * * ?",
        name: "<nightly-snap-{now/d}>",
        repository: "backups",
        config: { indices: ["*"], include_global_state: true },
        retention: { expire_after: "30d", min_count: 5, max_count: 50 },
    });
    assert.deepEqual(JSON.parse(bodies["role.json"]), {
        cluster: ["manage_slm", "cluster:admin/snapshot/*"],
        indices: [{ names: [".slm-history-*"], privileges: ["all"] }],
    });
});

test("the bootstrap Job is named by a hash of its inputs: a new policy is a new Job, the same stack the same Job", async () => {
    const a = bodiesOf(await renderStack("dev")).job.metadata.name;
    const again = bodiesOf(await renderStack("dev", {})).job.metadata.name;
    const b = bodiesOf(await renderStack("dev", { searchEngineSnapshotPolicyMaxCount: 60 })).job.metadata.name;
    assert.match(a, /^search-bootstrap-[0-9a-f]{10}$/);
    assert.equal(a, again);
    assert.notEqual(a, b);
});

test("on-demand snapshot and restore are suspended CronJobs running the backup scripts", async () => {
    const r = await renderStack("prod");
    const scripts = find(r, "ConfigMap", "search-snapshot-scripts", NS).data;
    assert.equal(scripts["snapshot.sh"], mountedScript("search-snapshot.sh"));
    assert.equal(scripts["restore.sh"], mountedScript("search-restore.sh"));
    for (const name of ["search-snapshot", "search-restore"]) {
        const cj = find(r, "CronJob", name, NS);
        assert.equal(cj.spec.suspend, true);
        const c = podSpecOf(cj).containers[0];
        assert.equal(env(c, "SNAPSHOT_REPOSITORY").value, "backups");
        assert.equal(env(c, "SEARCH_URL").value, "http://search.search.svc.cluster.local:9200");
        assert.equal(env(c, "SEARCH_PASSWORD").valueFrom.secretKeyRef.name, "search-elastic");
    }
});

test("network policy: ingress controller and jobs on 9200, nodes among themselves on 9300", async () => {
    const r = await renderStack("prod");
    const np = find(r, "NetworkPolicy", "search", NS);
    const nodes = find(r, "StatefulSet", "search", NS).spec.selector.matchLabels;
    const jobs = find(r, "CronJob", "search-snapshot", NS).spec.jobTemplate.spec.template.metadata.labels;
    const rule = (port: number, match: (f: any) => boolean) => np.spec.ingress.some((i: any) => i.ports.some((p: any) => p.port === port) && i.from.some(match));
    assert.ok(rule(9200, (f) => f.namespaceSelector?.matchLabels?.["kubernetes.io/metadata.name"] === "ingress-nginx" && !f.podSelector));
    assert.ok(rule(9200, (f) => Object.entries(f.podSelector?.matchLabels ?? { x: "y" }).every(([k, v]) => jobs[k] === v)));
    assert.ok(rule(9300, (f) => JSON.stringify(f.podSelector?.matchLabels) === JSON.stringify(nodes)));
    assert.ok(!np.spec.ingress.some((i: any) => i.ports.some((p: any) => p.port === 9300) && i.from.some((f: any) => !f.podSelector)), "9300 only from pods");
    assert.ok(np.spec.egress.some((e: any) => e.ports.some((p: any) => p.port === 9300)));
});

test("hardened pods without a privileged container; mmap off by default (no vm.max_map_count needed)", async () => {
    const r = await renderStack("prod");
    const sts = find(r, "StatefulSet", "search", NS);
    for (const c of containersOf(sts)) {
        assert.equal(c.securityContext.privileged, false);
        assert.equal(c.securityContext.allowPrivilegeEscalation, false);
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
        assert.ok(c.resources.requests && c.resources.limits);
    }
    assert.equal(sts.spec.template.spec.automountServiceAccountToken, false);
    assert.match(find(r, "ConfigMap", "search-config", NS).data["elasticsearch.yml"], /node\.store\.allow_mmap: false/);
    assert.ok(sts.metadata.annotations["configmap.stakater.com/reload"].includes("search-config"));
});

test("no secret value of the search engine in a ConfigMap, an env literal or an annotation", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        const values = all(r, "Secret").filter((s) => s.metadata?.namespace === NS)
            .flatMap((s) => Object.values({ ...(s.stringData ?? {}), ...(s.data ?? {}) }) as string[])
            .filter((v) => typeof v === "string" && v.length >= 8);
        assert.ok(values.length > 0);
        for (const o of r.objects.filter((x) => x.kind !== "Secret")) {
            const json = JSON.stringify(o);
            for (const v of values) assert.ok(!json.includes(v), `${stack}: a secret value appears in ${o.kind} ${o.metadata?.name}`);
        }
    }
});

test("config: a heap above half the memory limit and a shared RWO fs repository are refused, naming the key", async () => {
    const heap = await renderStack("prod", { searchEngineHeap: "3g" });
    assert.match(heap.errors.join("\n"), /ops:searchEngineHeap: 3g is more than half of searchEngineLimitsMemory 4096Mi/);
    const fsRepo = await renderStack("prod", { searchEngineSnapshotType: "fs" });
    assert.match(fsRepo.errors.join("\n"), /ops:searchEngineSnapshotFsAccessMode: 3 nodes cannot share a ReadWriteOnce/);
    const cron = await renderStack("dev", { searchEngineSnapshotPolicySchedule: "30 1 * * *" });
    assert.match(cron.errors.join("\n"), /ops:searchEngineSnapshotPolicySchedule: .*six-field cron/);
});

// ---- the bootstrap script against a fake snapshot API ----

interface Seen { method: string; path: string; auth?: string; body: string }

async function runBootstrap(opts: { password?: string; serverPassword?: string; verifyNodes: boolean; role: boolean }) {
    const expected = opts.serverPassword ?? opts.password;
    const seen: Seen[] = [];
    const server = http.createServer((req, res) => {
        let body = "";
        req.on("data", (d) => (body += d));
        req.on("end", () => {
            seen.push({ method: req.method!, path: req.url!, auth: req.headers.authorization, body });
            const send = (code: number, o: unknown) => { res.writeHead(code, { "content-type": "application/json" }); res.end(JSON.stringify(o)); };
            if (expected && req.headers.authorization !== "Basic " + Buffer.from(`elastic:${expected}`).toString("base64")) return send(401, { error: "auth" });
            if (req.url!.startsWith("/_cluster/health")) return send(200, { status: "green" });
            if (req.url!.endsWith("/_verify")) return send(200, opts.verifyNodes ? { nodes: { abc123: { name: "search-0" } } } : { nodes: {} });
            return send(200, { acknowledged: true });
        });
    });
    await new Promise<void>((ok) => server.listen(0, "127.0.0.1", ok));
    const port = (server.address() as AddressInfo).port;
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "search-bootstrap-"));
    fs.writeFileSync(path.join(dir, "repository.json"), JSON.stringify({ type: "fs", settings: { location: "/snap" } }));
    fs.writeFileSync(path.join(dir, "policy.json"), JSON.stringify({ schedule: "0 30 1 * * ?", name: "<nightly-snap-{now/d}>" }));
    if (opts.role) fs.writeFileSync(path.join(dir, "role.json"), JSON.stringify({ cluster: ["manage_slm"] }));
    const script = path.resolve(__dirname, "..", "components", "searchEngine", "searchBootstrap.sh");
    const child = spawn("sh", [script], {
        env: {
            PATH: process.env.PATH, SEARCH_URL: `http://127.0.0.1:${port}`, SNAPSHOT_REPOSITORY: "backups", BODIES_DIR: dir,
            POLICY_ID: "nightly-snapshots", ROLE: "slm-admin", WAIT_TIMEOUT: "10",
            ...(opts.password ? { SEARCH_PASSWORD: opts.password } : {}),
        },
    });
    let output = "";
    child.stdout.on("data", (d) => (output += d));
    child.stderr.on("data", (d) => (output += d));
    const code = await new Promise<number>((ok) => child.on("close", (c) => ok(c ?? -1)));
    server.close();
    return { code, output, seen };
}

test("bootstrap script: repository, verify, role, policy in order, each with basic auth and its body", async () => {
    const password = 'pw"with\\quotes-0123';
    const { code, output, seen } = await runBootstrap({ password, verifyNodes: true, role: true });
    assert.equal(code, 0, output);
    const calls = seen.filter((s) => !s.path.startsWith("/_cluster/health"));
    assert.deepEqual(calls.map((s) => `${s.method} ${s.path}`), [
        "PUT /_snapshot/backups",
        "POST /_snapshot/backups/_verify",
        "POST /_security/role/slm-admin",
        "PUT /_slm/policy/nightly-snapshots",
    ]);
    const basic = "Basic " + Buffer.from(`elastic:${password}`).toString("base64");
    for (const s of seen) assert.equal(s.auth, basic);
    assert.deepEqual(JSON.parse(calls[0].body), { type: "fs", settings: { location: "/snap" } });
    assert.equal(calls[1].body, "");
    assert.deepEqual(JSON.parse(calls[2].body), { cluster: ["manage_slm"] });
    assert.deepEqual(JSON.parse(calls[3].body), { schedule: "0 30 1 * * ?", name: "<nightly-snap-{now/d}>" });
    assert.ok(!output.includes(password), "the password is never printed");
});

test("bootstrap script: fails when the verify response lists no nodes, before the policy", async () => {
    const { code, output, seen } = await runBootstrap({ password: "secret-password-1", verifyNodes: false, role: true });
    assert.notEqual(code, 0);
    assert.match(output, /repository backups is not usable: the verify response lists no nodes/);
    assert.ok(!seen.some((s) => s.path.startsWith("/_slm/")), "no lifecycle policy after a failed verify");
});

test("bootstrap script: security off sends no authentication and creates no role", async () => {
    const { code, output, seen } = await runBootstrap({ verifyNodes: true, role: false });
    assert.equal(code, 0, output);
    assert.ok(seen.every((s) => s.auth === undefined));
    assert.ok(!seen.some((s) => s.path.startsWith("/_security/")));
});

test("bootstrap script: a wrong password stops with a clear 401 message", async () => {
    const { code, output, seen } = await runBootstrap({ password: "wrong-password-1", serverPassword: "right-password-1", verifyNodes: true, role: true });
    assert.notEqual(code, 0);
    assert.match(output, /HTTP 401, authentication failed for user 'elastic'/);
    assert.ok(!seen.some((s) => s.method !== "GET"), "nothing is created");
});

test("cluster.initial_master_nodes only until the cluster has formed: the copy step drops it once the node's marker exists", () => {
    const cfg = offlineStackConfig("prod");
    const settings = nodeSettings(cfg, "search-engine-headless");
    const n = cfg.searchEngine.name;
    assert.ok(settings.split("\n").includes(`cluster.initial_master_nodes: ["${n}-0", "${n}-1", "${n}-2"]`), settings);
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "es-settings-"));
    try {
        fs.mkdirSync(path.join(dir, "data"));
        fs.writeFileSync(path.join(dir, "in.yml"), settings);
        const copy = () => {
            fs.rmSync(path.join(dir, "out.yml"), { force: true });
            execFileSync("sh", ["-c", settingsCopyStep(`${dir}/in.yml`, `${dir}/out.yml`, `${dir}/data`)]);
            return fs.readFileSync(path.join(dir, "out.yml"), "utf8");
        };
        assert.equal(copy(), settings, "first bootstrap: the file as rendered");
        fs.writeFileSync(path.join(dir, "data", FORMED_MARKER), "");
        const formed = copy();
        assert.doesNotMatch(formed, /initial_master_nodes/);
        assert.equal(formed, settings.split("\n").filter((l) => !l.startsWith("cluster.initial_master_nodes:")).join("\n"), "every other line kept");
        assert.match(formed, /^discovery\.seed_hosts: /m);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("readiness: the node's health decides; the marker is written only once an elected master is seen, with basic auth", async () => {
    const cfg = offlineStackConfig("prod");
    let master: string | null = null;
    const auths: (string | undefined)[] = [];
    const server = http.createServer((req, res) => {
        auths.push(req.headers.authorization);
        if (req.url?.startsWith("/_cluster/health")) res.end('{"status":"green"}');
        else if (req.url?.startsWith("/_cluster/state/master_node")) res.end(master ? `{"cluster_name":"c","master_node":"${master}"}` : '{"cluster_name":"c"}');
        else res.writeHead(404).end();
    });
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "es-ready-"));
    try {
        const port = (server.address() as AddressInfo).port;
        const script = readinessScript(cfg).replaceAll(`127.0.0.1:${cfg.searchEngine.httpPort}`, `127.0.0.1:${port}`).replaceAll("/usr/share/elasticsearch/data", dir);
        assert.ok(readinessScript(cfg).includes(`/usr/share/elasticsearch/data/${FORMED_MARKER}`));
        const run = () => new Promise<number>((resolve) => spawn("sh", ["-c", script], { env: { PATH: process.env.PATH, ELASTIC_PASSWORD: "pw-1" }, stdio: "ignore" }).on("exit", (c) => resolve(c ?? 1)));
        assert.equal(await run(), 0);
        assert.ok(!fs.existsSync(path.join(dir, FORMED_MARKER)), "no master yet: no marker");
        master = "abc123";
        assert.equal(await run(), 0);
        assert.ok(fs.existsSync(path.join(dir, FORMED_MARKER)), "master seen: marker written");
        assert.ok(auths.every((a) => a === "Basic " + Buffer.from("elastic:pw-1").toString("base64")));
        server.close();
        assert.notEqual(await run(), 0, "health failing: not ready, marker or not");
    } finally {
        server.close();
        fs.rmSync(dir, { recursive: true, force: true });
    }
    assert.doesNotMatch(readinessScript(offlineStackConfig("dev")), /master_node|cluster-formed/, "one node: no marker");
});

test("the init container mounts the data volume read-only to look for the marker", async () => {
    const r = await renderStack("prod");
    const sts: any = all(r, "StatefulSet").find((s) => s.metadata?.namespace === NS)!;
    const init = podSpecOf(sts).initContainers.find((c: any) => c.name === "prepare-config");
    assert.deepEqual(init.volumeMounts.find((m: any) => m.name === "data"), { name: "data", mountPath: "/usr/share/elasticsearch/data", readOnly: true });
    assert.match(init.command[2], /if \[ -e \/usr\/share\/elasticsearch\/data\/\.cluster-formed \]; then grep -v '\^cluster\\\.initial_master_nodes:'/);
});
