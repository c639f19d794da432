import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, containersOf, find, renderStack, qosPart } from "./render";

const NS = "column-store";
const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);
const inNs = (r: any, kind: string): any[] => all(r, kind).filter((o) => o.metadata?.namespace === NS);
const fqdn = (sts: string, i: number, svc: string) => `${sts}-${i}.${svc}.${NS}.svc.cluster.local`;

test("HTTP 8123 and native 9000 published as node ports 31567 and 30900", async () => {
    const r = await renderStack("prod");
    const svc = find(r, "Service", "column-store", NS);
    assert.equal(svc.spec.type, "NodePort");
    const byName = Object.fromEntries(svc.spec.ports.map((p: any) => [p.name, p]));
    assert.equal(byName.http.port, 8123);
    assert.equal(byName.http.nodePort, 31567);
    assert.equal(byName.native.port, 9000);
    assert.equal(byName.native.nodePort, 30900);
    // the client address survives, so the ipBlock rules of the policy apply
    assert.equal(svc.spec.externalTrafficPolicy, "Local");
});

test("prod: 2 shards x 3 replicas (StatefulSets behind a headless service) and a keeper ensemble of 3", async () => {
    const r = await renderStack("prod");
    const servers = inNs(r, "StatefulSet").filter((s) => s.metadata.name.startsWith("column-store-shard-"));
    assert.deepEqual(servers.map((s) => s.metadata.name).sort(), ["column-store-shard-0", "column-store-shard-1"]);
    for (const s of servers) {
        assert.equal(s.spec.replicas, 3);
        const headless = find(r, "Service", s.spec.serviceName, NS);
        assert.equal(headless.spec.clusterIP, "None");
        for (const [k, v] of Object.entries(headless.spec.selector)) assert.equal(s.spec.template.metadata.labels[k], v);
    }
    const keeper = find(r, "StatefulSet", "column-store-keeper", NS);
    assert.equal(keeper.spec.replicas, 3);
    assert.equal(find(r, "Service", keeper.spec.serviceName, NS).spec.clusterIP, "None");
});

test("prod: the topology (remote_servers, keeper nodes, macros) is generated for 2 x 3 with 3 keepers", async () => {
    const r = await renderStack("prod");
    const xml = find(r, "ConfigMap", "column-store-config", NS).data["cluster.xml"];
    const shards = [...xml.matchAll(/<shard>([\s\S]*?)<\/shard>/g)].map((m) => [...m[1].matchAll(/<host>([^<]+)<\/host>/g)].map((h) => h[1]));
    assert.deepEqual(shards, [0, 1].map((s) => [0, 1, 2].map((i) => fqdn(`column-store-shard-${s}`, i, "column-store-headless"))));
    assert.equal((xml.match(/<internal_replication>true<\/internal_replication>/g) ?? []).length, 2);
    const keepers = [...xml.matchAll(/<node><host>([^<]+)<\/host><port>9181<\/port><\/node>/g)].map((m) => m[1]);
    assert.deepEqual(keepers, [0, 1, 2].map((i) => fqdn("column-store-keeper", i, "column-store-keeper-headless")));
    assert.match(xml, /<shard from_env="CH_SHARD"\/>/);
    assert.match(xml, /<replica from_env="CH_REPLICA"\/>/);
    const raft = find(r, "ConfigMap", "column-store-keeper-config", NS).data["keeper_config.xml"];
    assert.equal((raft.match(/<server><id>\d<\/id>/g) ?? []).length, 3);
    // each shard's pods carry their shard index and their own name as replica
    for (const s of [0, 1]) {
        const c = find(r, "StatefulSet", `column-store-shard-${s}`, NS).spec.template.spec.containers[0];
        assert.equal(env(c, "CH_SHARD").value, String(s));
        assert.equal(env(c, "CH_REPLICA").value, "$(POD_NAME)");
        assert.equal(env(c, "POD_NAME").valueFrom.fieldRef.fieldPath, "metadata.name");
    }
});

test("dev: one shard, one replica, no keeper and no coordination section", async () => {
    const r = await renderStack("dev");
    const servers = inNs(r, "StatefulSet");
    assert.deepEqual(servers.map((s) => [s.metadata.name, s.spec.replicas]), [["column-store-shard-0", 1]]);
    const xml = find(r, "ConfigMap", "column-store-config", NS).data["cluster.xml"];
    assert.ok(!xml.includes("<zookeeper>"));
    assert.equal((xml.match(/<replica>/g) ?? []).length, 1);
    assert.equal(inNs(r, "PodDisruptionBudget").length, 0);
});

test("user admin with the password in a Secret key `password`; the XML names the variable, never the value", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        const secret = find(r, "Secret", "column-store-auth", NS);
        const password = secret.stringData.password;
        assert.ok(password.length >= 16);
        const users = find(r, "ConfigMap", "column-store-users", NS).data["users.xml"];
        assert.match(users, /<admin>\s*<password from_env="CLICKHOUSE_ADMIN_PASSWORD"\/>/);
        assert.match(users, /<default remove="remove"\/>/);
        const c = find(r, "StatefulSet", "column-store-shard-0", NS).spec.template.spec.containers[0];
        assert.deepEqual(env(c, "CLICKHOUSE_ADMIN_PASSWORD").valueFrom.secretKeyRef, { name: "column-store-auth", key: "password" });
        const values = (Object.values(secret.stringData) as string[]).filter((v) => v.length >= 8);
        for (const o of r.objects.filter((x) => x.kind !== "Secret")) {
            const json = JSON.stringify(o);
            for (const v of values) assert.ok(!json.includes(v), `${stack}: a column store secret appears in ${o.kind} ${o.metadata?.name}`);
        }
    }
});

test("a password from secret config replaces the generated one", async () => {
    const r = await renderStack("dev", { columnStorePassword: "from-config-password-123" });
    assert.deepEqual(r.errors, []);
    assert.equal(find(r, "Secret", "column-store-auth", NS).stringData.password, "from-config-password-123");
    assert.ok(!r.resources.some((x) => x.type === "random:index/randomPassword:RandomPassword" && x.name === "column-store-password"));
});

test("prod: Guaranteed QoS (requests equal limits) and a disruption budget per shard and for the keepers", async () => {
    const r = await renderStack("prod");
    for (const s of inNs(r, "StatefulSet")) {
        for (const c of containersOf(s)) assert.deepEqual(qosPart(c.resources.requests), qosPart(c.resources.limits), `${s.metadata.name}/${c.name}`);
        const pdb = inNs(r, "PodDisruptionBudget").find((p) => JSON.stringify(p.spec.selector.matchLabels) === JSON.stringify(s.spec.selector.matchLabels));
        assert.ok(pdb, `a disruption budget for ${s.metadata.name}`);
        assert.equal(pdb.spec.maxUnavailable, 1);
        assert.equal(s.spec.template.spec.topologySpreadConstraints[0].topologyKey, "kubernetes.io/hostname");
    }
    assert.equal(inNs(r, "HorizontalPodAutoscaler").length, 0);
    const bad = await renderStack("prod", { columnStoreRequestsCpu: "1" });
    assert.match(bad.errors.join("\n"), /ops:columnStoreRequestsCpu: 1 differs from columnStoreLimitsCpu 2/);
});

test("probes on /ping, hardened pods, reloader annotations", async () => {
    const r = await renderStack("prod");
    const s = find(r, "StatefulSet", "column-store-shard-1", NS);
    const c = s.spec.template.spec.containers[0];
    for (const probe of [c.livenessProbe, c.readinessProbe, c.startupProbe]) assert.equal(probe.httpGet.path, "/ping");
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(c.securityContext.allowPrivilegeEscalation, false);
    assert.ok(c.lifecycle.preStop);
    assert.match(s.metadata.annotations["configmap.stakater.com/reload"], /column-store-config/);
    assert.equal(s.metadata.annotations["secret.stakater.com/reload"], "column-store-auth");
    const k = find(r, "StatefulSet", "column-store-keeper", NS).spec.template.spec.containers[0];
    assert.ok(k.livenessProbe && k.readinessProbe);
});

test("network policy: node-port clients from the configured CIDRs; replicas among themselves; keeper only from the servers", async () => {
    const r = await renderStack("prod", { columnStoreClientCidrs: ["192.168.10.0/24", "10.20.0.0/16"] });
    assert.deepEqual(r.errors, []);
    const np = find(r, "NetworkPolicy", "column-store", NS);
    const clients = np.spec.ingress.find((i: any) => i.from.some((f: any) => f.ipBlock));
    assert.deepEqual(clients.from.map((f: any) => f.ipBlock.cidr), ["192.168.10.0/24", "10.20.0.0/16"]);
    assert.deepEqual(clients.ports.map((p: any) => p.port).sort(), [8123, 9000]);
    const peers = np.spec.ingress.find((i: any) => i.from.some((f: any) => f.podSelector));
    assert.deepEqual(peers.ports.map((p: any) => p.port).sort(), [9000, 9009]);
    assert.ok(np.spec.egress.some((e: any) => e.ports.some((p: any) => p.port === 9181)), "servers reach the keepers");
    const keeper = find(r, "NetworkPolicy", "column-store-keeper", NS);
    const fromServers = keeper.spec.ingress.find((i: any) => i.ports.some((p: any) => p.port === 9181));
    assert.equal(fromServers.from[0].podSelector.matchLabels["app.kubernetes.io/component"], "server");
    assert.ok(keeper.spec.ingress.some((i: any) => i.ports.some((p: any) => p.port === 9234)));
});

test("config: node ports out of range, a bad CIDR, an even or missing keeper ensemble are refused, naming the key", async () => {
    const r = await renderStack("dev", { columnStoreHttpNodePort: 8123, columnStoreClientCidrs: ["10.0.0.0"] });
    const errors = r.errors.join("\n");
    assert.match(errors, /ops:columnStoreHttpNodePort: 8123 is below 30000; expected an integer from 30000 to 32767 \(node port\)/);
    assert.match(errors, /ops:columnStoreClientCidrs: item 0: got "10.0.0.0"/);
    const even = await renderStack("prod", { columnStoreKeeperReplicas: 2 });
    assert.match(even.errors.join("\n"), /ops:columnStoreKeeperReplicas: 2 members .*; expected an odd number/);
    const none = await renderStack("dev", { columnStoreReplicasPerShard: 2 });
    assert.match(none.errors.join("\n"), /ops:columnStoreKeeperReplicas: 0 with 2 replicas per shard/);
    const same = await renderStack("dev", { columnStoreNativeNodePort: 31567 });
    assert.match(same.errors.join("\n"), /ops:columnStoreNativeNodePort: 31567 is also columnStoreHttpNodePort/);
});

test("logs to stdout only and no MySQL/PostgreSQL listeners: the stock config.xml's file logs and ports 9004/9005 are removed", async () => {
    const r = await renderStack("prod");
    const xml: string = find(r, "ConfigMap", "column-store-config", NS).data["cluster.xml"];
    // The stock /etc/clickhouse-server/config.xml sets logger.log and logger.errorlog under
    // /var/log/clickhouse-server (size 1000M, count 10) and mysql_port 9004, postgresql_port 9005;
    // a config.d element with remove="remove" deletes the stock element when the files are merged.
    const logger = /\n    <logger>\n([\s\S]*?)\n    <\/logger>/.exec(xml)?.[1] ?? "";
    assert.match(logger, /^\s*<console>1<\/console>$/m);
    assert.match(logger, /^\s*<log remove="remove"\/>$/m);
    assert.match(logger, /^\s*<errorlog remove="remove"\/>$/m);
    assert.doesNotMatch(xml, /<log>|<errorlog>|<size>|<count>/, "no file log of our own");
    const topLevel = xml.split("\n").filter((l) => /^ {4}<[a-z]/.test(l)).map((l) => l.trim());
    assert.ok(topLevel.includes('<mysql_port remove="remove"/>'), xml);
    assert.ok(topLevel.includes('<postgresql_port remove="remove"/>'), xml);
    for (const sts of inNs(r, "StatefulSet").filter((s) => s.metadata.name.startsWith("column-store-shard-")))
        for (const c of containersOf(sts)) for (const p of c.ports ?? []) assert.ok(![9004, 9005].includes(p.containerPort), `${sts.metadata.name} ${c.name} declares ${p.containerPort}`);
    for (const s of inNs(r, "Service")) for (const p of s.spec.ports ?? []) assert.ok(![9004, 9005].includes(p.port) && ![9004, 9005].includes(p.targetPort), `${s.metadata.name} exposes ${p.port}`);
});
