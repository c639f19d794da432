import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, containersOf, find, podSpecOf, renderStack } from "./render";
import { mountedScript } from "./backups/mounted";

const NS = "booking";
const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);

test("one replica with the Recreate strategy on a ReadWriteOnce SQLite volume", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        const d = find(r, "Deployment", "booking", NS);
        assert.equal(d.spec.replicas, 1);
        assert.equal(d.spec.strategy.type, "Recreate");
        assert.equal(d.spec.strategy.rollingUpdate, undefined);
        assert.equal(d.metadata.annotations["ops.example.com/storage"], "sqlite", "marked for the sqlite-single-writer policy");
        const pod = d.spec.template.spec;
        const data = pod.volumes.find((v: any) => v.persistentVolumeClaim);
        const pvc = find(r, "PersistentVolumeClaim", data.persistentVolumeClaim.claimName, NS);
        assert.deepEqual(pvc.spec.accessModes, ["ReadWriteOnce"]);
        const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === data.name);
        assert.equal(env(pod.containers[0], "DATABASE_PATH").value, `${mount.mountPath}/booking.db`);
    }
});

test("no autoscaler and no disruption budget for the single replica", async () => {
    const r = await renderStack("prod");
    assert.equal(all(r, "HorizontalPodAutoscaler").filter((h) => h.spec.scaleTargetRef.name === "booking" || h.metadata?.namespace === NS).length, 0);
    assert.equal(all(r, "PodDisruptionBudget").filter((p) => p.metadata?.namespace === NS).length, 0);
});

test("probes: liveness on /health, readiness on /readyz (section 4.4); preStop and grace period", async () => {
    const r = await renderStack("prod");
    const pod = find(r, "Deployment", "booking", NS).spec.template.spec;
    const c = pod.containers[0];
    assert.equal(c.livenessProbe.httpGet.path, "/health");
    assert.equal(c.readinessProbe.httpGet.path, "/readyz");
    assert.equal(c.livenessProbe.httpGet.port, "http");
    assert.ok(c.lifecycle.preStop);
    assert.equal(pod.terminationGracePeriodSeconds, 30);
    assert.equal(c.securityContext.readOnlyRootFilesystem, true);
    assert.equal(pod.automountServiceAccountToken, false);
});

test("the chat-notification secret has exactly webhook_url, sec_secret and revoke_secret, read through secretKeyRef", async () => {
    const r = await renderStack("prod");
    const secret = find(r, "Secret", "booking-chat-notification", NS);
    assert.deepEqual(Object.keys(secret.stringData).sort(), ["revoke_secret", "sec_secret", "webhook_url"]);
    const c = find(r, "Deployment", "booking", NS).spec.template.spec.containers[0];
    const refs = c.env.filter((e: any) => e.valueFrom?.secretKeyRef?.name === "booking-chat-notification").map((e: any) => e.valueFrom.secretKeyRef.key).sort();
    assert.deepEqual(refs, ["revoke_secret", "sec_secret", "webhook_url"]);
    const d = find(r, "Deployment", "booking", NS);
    assert.equal(d.metadata.annotations["secret.stakater.com/reload"], "booking-chat-notification");
});

test("no secret value of the booking application in a ConfigMap, an env literal or an annotation", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        const values = Object.values(find(r, "Secret", "booking-chat-notification", NS).stringData) as string[];
        for (const o of r.objects.filter((x) => x.kind !== "Secret")) {
            const json = JSON.stringify(o);
            for (const v of values) assert.ok(!json.includes(v), `${stack}: a chat secret value appears in ${o.kind} ${o.metadata?.name}`);
        }
    }
});

test("service, TLS ingress on booking.<domain>, and a policy: ingress controller in, the webhook (443) out", async () => {
    const r = await renderStack("prod");
    const svc = find(r, "Service", "booking", NS);
    const ing = find(r, "Ingress", "booking", NS);
    assert.equal(ing.spec.rules[0].host, "booking.ops.example.com");
    assert.deepEqual(ing.spec.tls[0].hosts, ["booking.ops.example.com"]);
    assert.equal(ing.spec.rules[0].http.paths[0].backend.service.name, svc.metadata.name);
    const np = find(r, "NetworkPolicy", "booking", NS);
    assert.deepEqual(np.spec.podSelector.matchLabels, find(r, "Deployment", "booking", NS).spec.selector.matchLabels);
    assert.equal(np.spec.ingress.length, 1);
    assert.equal(np.spec.ingress[0].from[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"], "ingress-nginx");
    assert.deepEqual(np.spec.ingress[0].ports, [{ port: 8080, protocol: "TCP" }]);
    const out = np.spec.egress.find((e: any) => e.to.some((t: any) => t.ipBlock?.cidr === "0.0.0.0/0"));
    assert.deepEqual(out.ports, [{ port: 443, protocol: "TCP" }]);
});

test("backup: SQLite's consistent copy of the live file, on the booking pod's node, mounting the same volume", async () => {
    const r = await renderStack("prod");
    const cj = find(r, "CronJob", "booking-backup", NS);
    assert.equal(cj.spec.schedule, "15 3 * * *");
    const pod = podSpecOf(cj);
    const term = pod.affinity.podAffinity.requiredDuringSchedulingIgnoredDuringExecution[0];
    assert.equal(term.topologyKey, "kubernetes.io/hostname");
    assert.deepEqual(term.labelSelector.matchLabels, find(r, "Deployment", "booking", NS).spec.selector.matchLabels);
    const claims = pod.volumes.filter((v: any) => v.persistentVolumeClaim).map((v: any) => v.persistentVolumeClaim.claimName);
    assert.ok(claims.includes("booking-data"), "the backup mounts the application's volume");
    assert.equal(env(pod.containers[0], "SQLITE_DB").value, "/data/booking.db");
    const scripts = find(r, "ConfigMap", "booking-backup-scripts", NS).data;
    assert.equal(scripts["backup.sh"], mountedScript("sqlite-backup.sh"));
    assert.equal(scripts["restore.sh"], mountedScript("sqlite-restore.sh"));
    assert.equal(pod.containers[0].securityContext.runAsUser, find(r, "Deployment", "booking", NS).spec.template.spec.containers[0].securityContext.runAsUser);
});

test("restore: suspended, no affinity (the application is scaled to 0 first), same volume", async () => {
    const r = await renderStack("prod");
    const cj = find(r, "CronJob", "booking-backup-restore", NS);
    assert.equal(cj.spec.suspend, true);
    const pod = podSpecOf(cj);
    assert.equal(pod.affinity, undefined);
    assert.ok(pod.volumes.some((v: any) => v.persistentVolumeClaim?.claimName === "booking-data"));
    for (const c of containersOf(cj)) assert.ok(c.resources.limits && c.resources.requests);
});

test("config: the webhook must be an https URL; the schedule a five-field cron", async () => {
    const bad = await renderStack("dev", { bookingChatWebhookUrl: "http://chat.example.com/hook", bookingBackupSchedule: "daily" });
    const errors = bad.errors.join("\n");
    assert.match(errors, /ops:bookingChatWebhookUrl: has the wrong shape \(value not shown\); expected an https:\/\/ webhook URL/);
    assert.ok(!errors.includes("chat.example.com/hook"), "the secret value is not echoed");
    assert.match(errors, /ops:bookingBackupSchedule: "daily": expected exactly 5 fields, found 1: \[daily\]; expected a five-field cron/);
});
