/**
 * The column store's rendered configuration files (the prod stack: two shards of three replicas, a
 * keeper ensemble) loaded by the ClickHouse engine itself: chdb from PyPI (tools/products/pins.ts),
 * which embeds ClickHouse 24.8, the image's release. chdb is ClickHouse's local mode: it reads
 * config.xml from its working folder and merges config.d/ and (through users_config) users.xml
 * with users.d/ exactly as the server does, with from_env substitution, but it serves no port and
 * always queries as the user `default`. So it can check:
 *   - macros: {cluster} names a cluster of remote_servers, {shard} and {replica} are the pod's;
 *   - the cluster layout (system.clusters): one shard per shard StatefulSet of the render, one
 *     replica per pod, at the pod's stable DNS name and the container's native port, as the admin user;
 *   - users.d: the passwordless `default` user is gone (chdb cannot log in as it), the admin user
 *     exists with a password, the profile `default` and the quota `default`.
 * The folder stands for the pod's /etc/clickhouse-server: config.xml and users.xml stand for the
 * image's own (only what the rendered files refer to: users_config, the `default` profile and
 * quota); config.d/ and users.d/ hold the rendered ConfigMaps' files as the pod mounts them. To read
 * the user tables, a last users.d file (zz-probe.xml, test only) adds a `default` user for chdb on
 * loopback with access management; the removal of the image's `default` is checked without it.
 * Ports, listen_host, interserver and keeper settings are not checked (local mode serves nothing).
 */
import * as assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { before, test } from "node:test";
import { CHDB, chdbDir, chdbPython } from "../../tools/products/pins";
import { tempDir } from "../backups/servers";
import { find, renderStack } from "../render";
import { suiteNeeding } from "../skip";

const NS = "column-store";
const installed = fs.existsSync(path.join(chdbDir(), ".ops-installed"));
const missing = installed ? undefined : `chdb ${CHDB.version} is not in ${chdbDir()} (install it with: npx tsx tools/products/install.ts chdb)`;

/** Runs queries in chdb with its working folder `dir`; each answer is rows (JSONEachRow) or the error text. */
function chdb(dir: string, env: Record<string, string>, queries: string[]): { rows?: any[]; error?: string }[] {
    const script = [
        "import json, sys, chdb",
        "out = []",
        "for q in json.loads(sys.argv[1]):",
        "    try:",
        "        out.append({'rows': [json.loads(l) for l in str(chdb.query(q, 'JSONEachRow')).splitlines() if l.strip()]})",
        "    except Exception as e:",
        "        out.append({'error': str(e)})",
        "print(json.dumps(out))",
    ].join("\n");
    const text = execFileSync(chdbPython(), ["-c", script, JSON.stringify(queries)], { cwd: dir, env: { PATH: process.env.PATH ?? "/usr/bin:/bin", HOME: dir, ...env }, encoding: "utf8", timeout: 120_000, stdio: ["ignore", "pipe", "pipe"] });
    return JSON.parse(text.trim().split("\n").at(-1)!);
}

/** A pod's environment as the kubelet makes it: fieldRef metadata.name, Secret references, $(VAR) expansion. */
function podEnv(r: any, container: any, podName: string): Record<string, string> {
    const env: Record<string, string> = {};
    for (const e of container.env ?? []) {
        if (e.valueFrom?.fieldRef) {
            assert.equal(e.valueFrom.fieldRef.fieldPath, "metadata.name", `${e.name}: only metadata.name is emulated`);
            env[e.name] = podName;
        } else if (e.valueFrom?.secretKeyRef) {
            const s = find(r, "Secret", e.valueFrom.secretKeyRef.name, NS);
            const v = s.stringData?.[e.valueFrom.secretKeyRef.key] ?? Buffer.from(s.data?.[e.valueFrom.secretKeyRef.key] ?? "", "base64").toString();
            assert.ok(v, `${e.name}: no value in the rendered Secret`);
            env[e.name] = v;
        } else {
            env[e.name] = String(e.value).replace(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, n) => env[n] ?? m);
        }
    }
    return env;
}

suiteNeeding(`column store configuration loaded by chdb ${CHDB.version} (ClickHouse ${CHDB.engine})`, () => {
    let r: any;
    let shardSets: any[];
    let etc: string;
    let env: Record<string, string>;
    let pod: string;

    before(async () => {
        r = await renderStack("prod");
        shardSets = r.objects.filter((o: any) => o.kind === "StatefulSet" && o.metadata.namespace === NS && o.spec.template.spec.containers.some((c: any) => c.name === "server"))
            .sort((a: any, b: any) => a.metadata.name.localeCompare(b.metadata.name, undefined, { numeric: true }));
        assert.ok(shardSets.length > 1, "the prod stack renders several shards");
        // the last replica of the last shard: its macros differ from the first pod's in every field
        const sts = shardSets.at(-1);
        pod = `${sts.metadata.name}-${sts.spec.replicas - 1}`;
        const spec = sts.spec.template.spec;
        const server = spec.containers.find((c: any) => c.name === "server");
        env = podEnv(r, server, pod);
        etc = tempDir("clickhouse-etc").dir;
        for (const m of server.volumeMounts.filter((v: any) => v.mountPath.startsWith("/etc/clickhouse-server/"))) {
            const cm = find(r, "ConfigMap", spec.volumes.find((v: any) => v.name === m.name).configMap.name, NS);
            const dir = path.join(etc, path.relative("/etc/clickhouse-server", m.mountPath));
            fs.mkdirSync(dir, { recursive: true });
            for (const [file, text] of Object.entries<string>(cm.data)) fs.writeFileSync(path.join(dir, file), text);
        }
        assert.ok(fs.existsSync(path.join(etc, "config.d")) && fs.existsSync(path.join(etc, "users.d")), "the server mounts config.d and users.d");
        fs.writeFileSync(path.join(etc, "config.xml"), "<clickhouse>\n    <users_config>users.xml</users_config>\n</clickhouse>\n");
        fs.writeFileSync(path.join(etc, "users.xml"), [
            "<clickhouse>",
            "    <profiles><default/></profiles>",
            "    <quotas><default/></quotas>",
            "    <users><default><password/><networks><ip>::/0</ip></networks><profile>default</profile><quota>default</quota></default></users>",
            "</clickhouse>",
            "",
        ].join("\n"));
    });

    test("users.d removes the passwordless default user: chdb, which always logs in as default, is refused", () => {
        const [res] = chdb(etc, env, ["SELECT 1"]);
        assert.match(res.error ?? "", /default: Authentication failed: password is incorrect, or there is no user with such name/);
    });

    test("macros: {cluster} names a cluster of remote_servers; {shard} and {replica} are the pod's", () => {
        fs.writeFileSync(path.join(etc, "users.d", "zz-probe.xml"), "<clickhouse><users><default><password/><networks><ip>127.0.0.1</ip><ip>::1</ip></networks><profile>default</profile><quota>default</quota><access_management>1</access_management></default></users></clickhouse>\n");
        const [macros, clusters] = chdb(etc, env, ["SELECT macro, substitution FROM system.macros ORDER BY macro", "SELECT DISTINCT cluster FROM system.clusters"]);
        assert.equal(macros.error, undefined, macros.error);
        const m = Object.fromEntries(macros.rows!.map((x) => [x.macro, x.substitution]));
        assert.deepEqual(Object.keys(m).sort(), ["cluster", "replica", "shard"]);
        assert.ok(clusters.rows!.some((c) => c.cluster === m.cluster), `macro cluster=${m.cluster} is not in remote_servers`);
        assert.equal(m.replica, pod);
        assert.equal(m.shard, String(shardSets.length - 1), "the last shard StatefulSet's shard macro");
    });

    test("remote_servers: one shard per shard StatefulSet, one replica per pod at its stable DNS name and native port, as the admin user", () => {
        const [macros, rows, users] = chdb(etc, env, [
            "SELECT substitution FROM system.macros WHERE macro = 'cluster'",
            "SELECT cluster, shard_num, replica_num, host_name, port, user FROM system.clusters ORDER BY shard_num, replica_num",
            "SELECT name, auth_type FROM system.users ORDER BY name",
        ]);
        const cluster = macros.rows![0].substitution;
        const expected = shardSets.flatMap((sts, s) => {
            const server = sts.spec.template.spec.containers.find((c: any) => c.name === "server");
            const port = server.ports.find((p: any) => p.name === "native").containerPort;
            return Array.from({ length: sts.spec.replicas }, (_, i) => ({
                shard_num: s + 1, replica_num: i + 1, host_name: `${sts.metadata.name}-${i}.${sts.spec.serviceName}.${NS}.svc.cluster.local`, port,
            }));
        });
        assert.ok(find(r, "Service", shardSets[0].spec.serviceName, NS).spec.clusterIP === "None", "the pods' DNS names come from a headless Service");
        const got = rows.rows!.filter((x) => x.cluster === cluster);
        assert.deepEqual(got.map(({ shard_num, replica_num, host_name, port }) => ({ shard_num, replica_num, host_name, port })), expected);
        const replicaUsers = [...new Set(got.map((x) => x.user))];
        assert.equal(replicaUsers.length, 1);
        const admin = users.rows!.find((u) => u.name === replicaUsers[0]);
        assert.ok(admin, `the replicas' user ${replicaUsers[0]} is not a user of users.d`);
        assert.notEqual(admin.auth_type, "no_password");
    });

    test("users.d: the admin user has the default profile and quota, and manages access; no other user but the probe's", () => {
        const [users, profiles, quotas] = chdb(etc, env, [
            "SELECT name, auth_type FROM system.users ORDER BY name",
            "SELECT user_name, inherit_profile FROM system.settings_profile_elements WHERE user_name != ''",
            "SELECT name, apply_to_list FROM system.quotas",
        ]);
        for (const x of [users, profiles, quotas]) assert.equal(x.error, undefined, x.error);
        const names = users.rows!.map((u) => u.name);
        const admins = names.filter((n) => n !== "default");
        assert.equal(admins.length, 1, `users: ${names.join(", ")}`);
        const admin = admins[0];
        assert.equal(users.rows!.find((u) => u.name === admin).auth_type, "plaintext_password", "the password comes from the environment (from_env)");
        assert.deepEqual(profiles.rows!.filter((p) => p.user_name === admin).map((p) => p.inherit_profile), ["default"]);
        assert.ok(quotas.rows!.some((q) => q.name === "default" && q.apply_to_list.includes(admin)), JSON.stringify(quotas.rows));
        // access_management: the admin user may create users and grant (section 5.6's administrative user)
        const [grants] = chdb(etc, env, [`SHOW GRANTS FOR ${admin}`]);
        assert.equal(grants.error, undefined, grants.error);
        assert.match(JSON.stringify(grants.rows), /GRANT .*ACCESS MANAGEMENT|GRANT ALL ON \*\.\*/);
    });
}, missing);
