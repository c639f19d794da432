import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, containersOf, find, podSpecOf, renderStack, qosPart } from "./render";
import type { K8sObject } from "../policies/gatekeeper/types";
import { execFileSync, spawn, spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { backupScript } from "../backups/scripts";
import { REDIS_NEEDS, describeRun, freePort, run, runScript, skipUnless, sleep, tempDir } from "./backups/servers";

const NS = "data";
const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);
const policy = (r: any, name: string) => find(r, "NetworkPolicy", name, NS);
/** The ingress peers of a policy as "namespace/name-label/component-label:port". */
const ingressPeers = (p: K8sObject) =>
    p.spec.ingress.flatMap((rule: any) => rule.from.map((f: any) =>
        `${f.namespaceSelector?.matchLabels["kubernetes.io/metadata.name"]}/${f.podSelector?.matchLabels["app.kubernetes.io/name"]}/${f.podSelector?.matchLabels["app.kubernetes.io/component"]}:${rule.ports.map((x: any) => x.port).join(",")}`)).sort();

for (const [app, port] of [["postgres", 5432], ["redis", 6379], ["object-store", 9000]] as const) {
    test(`${app}: a one-pod StatefulSet behind its headless Service (serviceName), plus a client Service on ${port}`, async () => {
        const r = await renderStack("prod");
        const sts = find(r, "StatefulSet", app, NS);
        assert.equal(sts.spec.replicas, 1);
        assert.equal(sts.spec.serviceName, `${app}-headless`);
        const headless = find(r, "Service", `${app}-headless`, NS);
        assert.equal(headless.spec.clusterIP, "None");
        assert.deepEqual(headless.spec.selector, sts.spec.selector.matchLabels);
        const client = find(r, "Service", app, NS);
        assert.notEqual(client.spec.clusterIP, "None");
        assert.equal(client.spec.ports[0].port, port);
        // The client selector is a subset of the pod labels, and differs from the headless one.
        for (const [k, v] of Object.entries(client.spec.selector)) assert.equal(sts.spec.template.metadata.labels[k], v);
        assert.notDeepEqual(client.spec.selector, headless.spec.selector);
        const c = podSpecOf(sts).containers[0];
        assert.equal(c.ports[0].containerPort, port);
        assert.ok(c.livenessProbe && c.readinessProbe, "liveness and readiness probes");
    });

    test(`${app}: Guaranteed QoS in prod (requests equal limits), hardened pod, no token`, async () => {
        const r = await renderStack("prod");
        const pod = podSpecOf(find(r, "StatefulSet", app, NS));
        for (const c of pod.containers) {
            assert.deepEqual(qosPart(c.resources.requests), qosPart(c.resources.limits), `${c.name}: requests differ from limits`);
            assert.equal(c.securityContext.runAsNonRoot, true);
            assert.equal(c.securityContext.allowPrivilegeEscalation, false);
            assert.deepEqual(c.securityContext.capabilities.drop, ["ALL"]);
            assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        }
        assert.equal(pod.automountServiceAccountToken, false);
        assert.ok(pod.terminationGracePeriodSeconds >= 30);
    });
}

test("dev: data stores are smaller and Burstable; prod refuses requests below limits", async () => {
    const r = await renderStack("dev");
    const c = podSpecOf(find(r, "StatefulSet", "postgres", NS)).containers[0];
    assert.notDeepEqual(qosPart(c.resources.requests), qosPart(c.resources.limits));
    const bad = await renderStack("prod", { postgresRequestsMemory: "1Gi" });
    assert.ok(bad.errors.some((e) => /ops:postgresRequestsMemory: .*Guaranteed QoS/.test(e)), bad.errors.join("\n"));
});

test("PostgreSQL 15: superuser password generated into a Secret, read through secretKeyRef; data volume, fast shutdown", async () => {
    const r = await renderStack("prod");
    const sts = find(r, "StatefulSet", "postgres", NS);
    const c = podSpecOf(sts).containers[0];
    assert.match(c.image, /postgres:15\./);
    assert.deepEqual(env(c, "POSTGRES_PASSWORD").valueFrom.secretKeyRef, { name: "postgres-superuser", key: "password" });
    assert.deepEqual(Object.keys(find(r, "Secret", "postgres-superuser", NS).stringData).sort(), ["password", "username"]);
    assert.ok(r.resources.some((x) => x.type === "random:index/randomPassword:RandomPassword" && x.name === "postgres-superuser"));
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, "50Gi");
    assert.equal(podSpecOf(sts).securityContext.fsGroup, 999);
    assert.match(c.lifecycle.preStop.exec.command.join(" "), /pg_ctl .* -m fast/);
    assert.deepEqual(c.livenessProbe.exec.command.slice(0, 2), ["sh", "-c"]);
    assert.match(c.livenessProbe.exec.command[2], /pg_isready/);
});

test("PostgreSQL: the workflow tool's database and role come from an idempotent provisioning Job; credentials in the workflow namespace", async () => {
    const r = await renderStack("prod");
    const job = find(r, "Job", "postgres-provision", NS);
    const c = containersOf(job)[0];
    assert.deepEqual(env(c, "PGPASSWORD").valueFrom.secretKeyRef, { name: "postgres-superuser", key: "password" });
    assert.deepEqual(env(c, "DB_PASSWORD_0").valueFrom.secretKeyRef, { name: "postgres-db-workflow", key: "password" });
    const cm = find(r, "ConfigMap", "postgres-provision", NS);
    assert.equal(cm.data.databases, "workflow DB_PASSWORD_0\n");
    assert.match(cm.data["provision.sh"], /WHERE NOT EXISTS \(SELECT 1 FROM pg_roles/);
    assert.match(cm.data["provision.sh"], /WHERE NOT EXISTS \(SELECT 1 FROM pg_database/);
    assert.match(cm.data["provision.sh"], /\\getenv pw PROVISION_PASSWORD/);
    const client = find(r, "Secret", "workflow-postgres", "workflow");
    assert.deepEqual(Object.keys(client.stringData).sort(), ["password", "username"]);
    assert.equal(client.stringData.password, find(r, "Secret", "postgres-db-workflow", NS).stringData.password);
});

test("Redis 7: AOF and RDB persistence, noeviction, password through an included file (never argv), 10Gi volume", async () => {
    const r = await renderStack("prod");
    const sts = find(r, "StatefulSet", "redis", NS);
    const c = podSpecOf(sts).containers[0];
    assert.match(c.image, /redis:7\./);
    // redis-server (exec'd by sh, which first takes the server lock) reads the generated file.
    assert.deepEqual([c.command.slice(0, 2), c.command.at(-1)], [["sh", "-c"], "/etc/redis/redis.conf"]);
    assert.match(c.command[2], /; exec redis-server "\$2"$/);
    const conf = find(r, "ConfigMap", "redis-config", NS).data["redis.conf"];
    assert.match(conf, /^appendonly yes$/m);
    assert.match(conf, /^save \d+ \d+/m);
    assert.match(conf, /^maxmemory-policy noeviction$/m);
    assert.match(conf, /^include \/etc\/redis-auth\/auth\.conf$/m);
    assert.doesNotMatch(conf, /requirepass/);
    const auth = find(r, "Secret", "redis-auth", NS);
    assert.equal(auth.stringData["auth.conf"], `requirepass ${auth.stringData.password}\n`);
    assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, "10Gi");
    assert.deepEqual(Object.keys(find(r, "Secret", "workflow-redis", "workflow").stringData), ["password"]);
});

test("object store: S3 API with generated root credentials, buckets and a bucket-scoped snapshot key for the search engine", async () => {
    const r = await renderStack("prod");
    const c = podSpecOf(find(r, "StatefulSet", "object-store", NS)).containers[0];
    assert.deepEqual(env(c, "MINIO_ROOT_PASSWORD").valueFrom.secretKeyRef, { name: "object-store-root", key: "secret-key" });
    assert.equal(c.livenessProbe.httpGet.path, "/minio/health/live");
    assert.equal(c.readinessProbe.httpGet.path, "/minio/health/ready");
    const provision = find(r, "ConfigMap", "object-store-provision", NS);
    const policyDoc = JSON.parse(provision.data["snapshot-policy.json"]);
    const resources = policyDoc.Statement.flatMap((s: any) => s.Resource);
    assert.deepEqual(resources.sort(), ["arn:aws:s3:::search-snapshots", "arn:aws:s3:::search-snapshots/*"]);
    assert.equal(env(containersOf(find(r, "Job", "object-store-provision", NS))[0], "BUCKETS").value, "search-snapshots");
    const searchSecret = find(r, "Secret", "search-snapshot-s3", "search");
    assert.deepEqual(Object.keys(searchSecret.stringData).sort(), ["access-key", "secret-key"]);
});

test("network: each store admits exactly its clients and its own jobs, and connects nowhere but DNS", async () => {
    const r = await renderStack("prod");
    assert.deepEqual(ingressPeers(policy(r, "postgres")), [
        "data/postgres/backup:5432", "data/postgres/provision:5432", "data/postgres/restore:5432",
        "workflow/workflow/backup:5432", "workflow/workflow/main:5432", "workflow/workflow/restore:5432", "workflow/workflow/worker:5432",
    ]);
    assert.deepEqual(ingressPeers(policy(r, "redis")), [
        "data/redis/backup:6379", "data/redis/restore:6379", "workflow/workflow/main:6379", "workflow/workflow/worker:6379",
    ]);
    assert.deepEqual(ingressPeers(policy(r, "object-store")), [
        "data/object-store/backup:9000", "data/object-store/provision:9000", "data/object-store/restore:9000", "search/search-engine/node:9000",
    ]);
    for (const name of ["postgres", "redis", "object-store"]) {
        const p = policy(r, name);
        assert.deepEqual(p.spec.policyTypes, ["Ingress", "Egress"]);
        assert.equal(p.spec.egress.length, 1, `${name}: only DNS egress`);
        assert.deepEqual(p.spec.egress[0].ports.map((x: any) => x.port), [53, 53]);
    }
});

const CRONS = [
    ["postgres-backup", "0 3 * * *", "postgres-backup.sh", "postgres-restore.sh"],
    ["redis-backup", "30 3 * * *", "redis-backup.sh", "redis-restore.sh"],
    ["object-store-backup", "0 4 * * *", "objectstore-backup.sh", "objectstore-restore.sh"],
] as const;

test("backups (section 8.3): PostgreSQL at 03:00 and the object store at 04:00 daily, 7-day retention, Forbid, limits and deadlines", async () => {
    const r = await renderStack("prod");
    for (const [name, schedule, script] of CRONS) {
        const cj = find(r, "CronJob", name, NS);
        assert.equal(cj.spec.schedule, schedule, name);
        assert.equal(cj.spec.concurrencyPolicy, "Forbid");
        assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
        assert.equal(cj.spec.failedJobsHistoryLimit, 3);
        assert.equal(cj.spec.startingDeadlineSeconds, 3600);
        assert.equal(cj.spec.jobTemplate.spec.backoffLimit, 1);
        assert.equal(cj.spec.jobTemplate.spec.activeDeadlineSeconds, 3600);
        const pod = podSpecOf(cj);
        assert.equal(pod.restartPolicy, "Never");
        assert.equal(pod.automountServiceAccountToken, false);
        const c = pod.containers[0];
        assert.deepEqual(c.command, ["sh", "/scripts/backup.sh"]);
        assert.equal(env(c, "RETENTION_DAYS").value, "7");
        assert.equal(env(c, "BACKUP_DIR").value, "/backup");
        assert.ok(c.resources.requests && c.resources.limits);
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.ok(c.volumeMounts.some((m: any) => m.mountPath === "/tmp"));
        const backupVolume = pod.volumes.find((v: any) => v.name === "backup");
        assert.equal(backupVolume.persistentVolumeClaim.claimName, name);
        find(r, "PersistentVolumeClaim", name, NS);
        const scripts = find(r, "ConfigMap", `${name}-scripts`, NS);
        assert.ok(scripts.data["backup.sh"].startsWith(`#!/bin/sh\n# ${script}`));
    }
});

test("restores: a suspended CronJob <name>-restore per store, runnable with kubectl create job --from, never on a schedule", async () => {
    const r = await renderStack("prod");
    for (const [name, , , restoreScript] of CRONS) {
        const cj = find(r, "CronJob", `${name}-restore`, NS);
        assert.equal(cj.spec.suspend, true);
        assert.equal(cj.spec.schedule, "0 0 31 2 *");
        const c = podSpecOf(cj).containers[0];
        assert.deepEqual(c.command, ["sh", "/scripts/restore.sh"]);
        assert.deepEqual(c.envFrom, [{ configMapRef: { name: `${name}-restore-options`, optional: true } }]);
        assert.match(find(r, "ConfigMap", `${name}-scripts`, NS).data["restore.sh"], new RegExp(`^#!/bin/sh\\n# ${restoreScript}`));
        assert.match(cj.metadata.annotations["ops/how-to-run"], new RegExp(`create job --from=cronjob/${name}-restore`));
    }
    // The Redis restore writes the data volume while Redis is stopped, as the redis user, as the AOF base.
    const redis = podSpecOf(find(r, "CronJob", "redis-backup-restore", NS));
    assert.equal(redis.volumes.find((v: any) => v.name === "redis-data").persistentVolumeClaim.claimName, "data-redis-0");
    assert.equal(redis.containers[0].securityContext.runAsUser, 999);
    assert.equal(env(redis.containers[0], "REDIS_PERSISTENCE_MODE").value, "aof");
    // It reads what the backup wrote (user 10001, folder 0750, files 0640): through the redis group, which
    // the backup runs as. A read-only mount gets no fsGroup change (the kubelet skips it), and the real
    // node's run found the backup's folder closed to the restore (0700, 10001:10001).
    const backup = podSpecOf(find(r, "CronJob", "redis-backup", NS));
    assert.equal(redis.securityContext.runAsGroup, 999);
    assert.equal(backup.securityContext.runAsGroup, 999);
});

test("backup credentials come only from the stores' Secrets (secretKeyRef), never literals", async () => {
    const r = await renderStack("prod");
    const expected: Record<string, Record<string, string>> = {
        "postgres-backup": { PGUSER: "postgres-superuser/username", PGPASSWORD: "postgres-superuser/password" },
        "redis-backup": { REDISCLI_AUTH: "redis-auth/password" },
        "object-store-backup": { OBJECTSTORE_ACCESS_KEY: "object-store-root/access-key", OBJECTSTORE_SECRET_KEY: "object-store-root/secret-key" },
    };
    for (const [name, refs] of Object.entries(expected)) {
        for (const cj of [find(r, "CronJob", name, NS), ...(name === "redis-backup" ? [] : [find(r, "CronJob", `${name}-restore`, NS)])]) {
            const c = podSpecOf(cj).containers[0];
            for (const [v, ref] of Object.entries(refs)) {
                const e = env(c, v);
                assert.equal(e.value, undefined, `${cj.metadata.name}: ${v} is a literal`);
                assert.equal(`${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`, ref);
            }
        }
    }
});

test("the backup jobs reach only their store; the stores' namespace is data", async () => {
    const r = await renderStack("prod");
    const egressTo = (p: any) => p.spec.egress.slice(1).map((e: any) => `${e.to[0].podSelector.matchLabels["app.kubernetes.io/name"]}:${e.ports[0].port}`);
    assert.deepEqual(egressTo(policy(r, "postgres-backup")), ["postgres:5432"]);
    assert.deepEqual(egressTo(policy(r, "redis-backup")), ["redis:6379"]);
    assert.deepEqual(egressTo(policy(r, "object-store-backup")), ["object-store:9000"]);
    assert.deepEqual(policy(r, "postgres-backup").spec.ingress ?? [], []);
    const stores = (all(r, "StatefulSet") as any[]).filter((s) => ["postgres", "redis", "object-store"].includes(s.metadata.name));
    assert.deepEqual(stores.map((s) => s.metadata.namespace), [NS, NS, NS]);
});

test("object store: when the stack sets the search engine's s3 key pair, that pair is provisioned and the search engine owns its Secret", async () => {
    const r = await renderStack("dev", { searchEngineSnapshotType: "s3", searchEngineSnapshotS3AccessKey: "GIVENACCESSKEY000001", searchEngineSnapshotS3SecretKey: "given-secret-key-00000000000000" });
    assert.deepEqual(r.errors, []);
    const owned = (all(r, "Secret") as any[]).filter((s) => s.metadata.name === "search-snapshot-s3");
    assert.equal(owned.length, 1);
    assert.notEqual(owned[0].metadata.labels["app.kubernetes.io/name"], "object-store");
    assert.equal(find(r, "Secret", "object-store-snapshot-key", NS).stringData["access-key"], "GIVENACCESSKEY000001");
});

test("redis: the rendered server holds the server lock its restore reads: the restore refuses while it runs, whatever the network says, and a server started during a restore waits for it (real redis-server)", { skip: skipUnless(REDIS_NEEDS) }, async () => {
    const r = await renderStack("prod");
    const server = podSpecOf(find(r, "StatefulSet", "redis", NS)).containers[0];
    const restore = podSpecOf(find(r, "CronJob", "redis-backup-restore", NS)).containers[0];
    const dataMount = server.volumeMounts.find((m: any) => m.name === "data").mountPath;
    assert.equal(env(restore, "REDIS_DATA_DIR").value, dataMount);
    const lockName = env(restore, "REDIS_SERVER_LOCK").value;
    const data = tempDir("redis-lock-data").dir;
    const conf = path.join(tempDir("redis-lock-conf").dir, "redis.conf");
    const port = await freePort();
    fs.writeFileSync(conf, `port ${port}\nbind 127.0.0.1\ndir ${data}\nsave ""\nappendonly no\n`);
    // The rendered command, its data folder moved to the test's.
    const command: string[] = server.command.map((a: string) => a.startsWith(`${dataMount}/`) ? path.join(data, a.slice(dataMount.length + 1)) : a === "/etc/redis/redis.conf" ? conf : a);
    assert.ok(command.includes(path.join(data, lockName)), `the server's command names the restore's lock ${lockName}: ${server.command.join(" ")}`);
    const start = () => {
        const child = spawn(command[0], command.slice(1), { stdio: ["ignore", "ignore", "pipe"] });
        let stderr = "";
        child.stderr!.on("data", (d) => (stderr += d));
        return { child, stderr: () => stderr, exited: new Promise<void>((res) => child.once("exit", () => res())) };
    };
    const answers = async (deadlineMs: number) => {
        for (const end = Date.now() + deadlineMs; Date.now() < end; await sleep(50)) {
            try { if ((await run("redis-cli", ["-p", String(port), "PING"])).trim() === "PONG") return true; } catch { /* not yet */ }
        }
        return false;
    };
    const backups = tempDir("redis-lock-backups").dir;
    const folder = path.join(backups, "2026-01-01T000000Z");
    fs.mkdirSync(folder);
    fs.writeFileSync(path.join(folder, "dump.rdb"), "REDIS0011 the backup");
    execFileSync("sh", ["-c", "sha256sum ./dump.rdb > SHA256SUMS"], { cwd: folder });
    // REDIS_HOST that cannot be reached: the network says nothing either way, as under a policy engine.
    const restoreEnv = { BACKUP_DIR: backups, REDIS_DATA_DIR: data, REDIS_SERVER_LOCK: lockName, REDIS_PERSISTENCE_MODE: "rdb", REDIS_HOST: "redis.invalid", REDIS_PORT: String(port) };

    const s1 = start();
    try {
        assert.ok(await answers(15_000), `the rendered command did not start redis-server: ${s1.stderr()}`);
        fs.writeFileSync(path.join(data, "dump.rdb"), "live data");
        const refused = await runScript("redis-restore", restoreEnv);
        assert.equal(refused.code, 1, describeRun(refused));
        assert.match(refused.stderr, /Redis is still running: its server holds .*\.redis-server\.lock; stop it first/);
        assert.equal(fs.readFileSync(path.join(data, "dump.rdb"), "utf8"), "live data");
    } finally {
        s1.child.kill("SIGTERM");
        await s1.exited;
    }
    const ok = await runScript("redis-restore", restoreEnv);
    assert.equal(ok.code, 0, describeRun(ok));
    assert.match(ok.stdout + ok.stderr, /no Redis server holds .* \(stopped\), good/);
    assert.equal(fs.readFileSync(path.join(data, "dump.rdb"), "utf8"), "REDIS0011 the backup");

    // A restore holds the lock (here a stand-in, until its stdin closes): the server waits for it, then starts.
    const lock = path.join(data, lockName);
    const holder = spawn("flock", [lock, "sh", "-c", "read x"], { stdio: ["pipe", "ignore", "ignore"] });
    const held = new Promise<void>((res) => holder.once("exit", () => res()));
    const isHeld = () => spawnSync("flock", ["-n", lock, "true"]).status === 1;
    for (const end = Date.now() + 15_000; !isHeld(); await sleep(50)) assert.ok(Date.now() < end, "the stand-in never took the lock");
    fs.rmSync(path.join(data, "dump.rdb"));
    const s2 = start();
    try {
        for (const end = Date.now() + 15_000; !/waiting for the restore that holds .*\.redis-server\.lock/.test(s2.stderr()); await sleep(50))
            assert.ok(Date.now() < end, `the server did not say it waits for the lock: ${s2.stderr()}`);
        assert.equal(await answers(1_000), false, "the server started while the lock was held");
        holder.stdin!.end();
        await held;
        assert.ok(await answers(15_000), `the server did not start once the lock was free: ${s2.stderr()}`);
    } finally {
        s2.child.kill("SIGTERM");
        await s2.exited;
    }
});

test("backup and restore Jobs: RETENTION_DAYS and CONNECT_WAIT_SECONDS set exactly where the script reads them; the first connection is tried again for a minute (a new pod's policy sync)", async () => {
    const r = await renderStack("prod");
    const jobs = all(r, "CronJob").filter((cj) => /^\/scripts\/(backup|restore)\.sh$/.test(podSpecOf(cj).containers[0].command?.[1] ?? ""));
    assert.ok(jobs.length >= 10, `backup and restore CronJobs found: ${jobs.length}`);
    const seen: string[] = [];
    for (const cj of jobs as any[]) {
        const pod = podSpecOf(cj);
        const c = pod.containers[0];
        const file = c.command[1].slice("/scripts/".length);
        const scripts = find(r, "ConfigMap", pod.volumes.find((v: any) => v.name === "scripts").configMap.name, cj.metadata.namespace);
        const name = /^#!\/bin\/sh\n# ([\w-]+\.sh)/.exec(scripts.data[file])![1];
        const reads = backupScript(name).env;
        for (const v of ["RETENTION_DAYS", "CONNECT_WAIT_SECONDS"]) assert.equal(env(c, v) !== undefined, reads.includes(v), `${cj.metadata.namespace}/${cj.metadata.name} (${name}): ${v}`);
        if (reads.includes("CONNECT_WAIT_SECONDS")) {
            assert.equal(env(c, "CONNECT_WAIT_SECONDS").value, "60", cj.metadata.name);
            seen.push(cj.metadata.name);
        }
    }
    assert.deepEqual(seen.sort(), ["postgres-backup", "postgres-backup-restore", "redis-backup", "workflow-backup", "workflow-backup-restore"]);
});
