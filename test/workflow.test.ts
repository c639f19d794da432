import { test } from "node:test";
import * as assert from "node:assert/strict";
import { all, find, podSpecOf, renderStack } from "./render";
import type { K8sObject } from "../policies/gatekeeper/types";

const NS = "workflow";
const env = (c: any, name: string) => c.env?.find((e: any) => e.name === name);
const main = (r: any) => find(r, "StatefulSet", "workflow-main", NS);
const workers = (r: any) => find(r, "StatefulSet", "workflow-worker", NS);
const container = (sts: K8sObject) => podSpecOf(sts).containers[0];

test("queue mode: one main process and two workers (section 8.2), each StatefulSet behind its headless Service", async () => {
    const r = await renderStack("prod");
    assert.equal(main(r).spec.replicas, 1);
    assert.equal(workers(r).spec.replicas, 2);
    assert.deepEqual(container(main(r)).args, ["start"]);
    assert.equal(container(workers(r)).args[0], "worker");
    for (const sts of [main(r), workers(r)]) {
        assert.equal(env(container(sts), "EXECUTIONS_MODE").value, "queue");
        const headless = find(r, "Service", sts.spec.serviceName, NS);
        assert.equal(headless.spec.clusterIP, "None");
        assert.deepEqual(headless.spec.selector, sts.spec.selector.matchLabels);
    }
    assert.equal(find(r, "Service", "workflow-main", NS).spec.ports[0].port, 5678);
});

test("tunables of table 8.2: timeouts, pool sizes 10 (main) and 5 (workers), N8N_CONCURRENCY_PRODUCTION_LIMIT (the spec's WF_ placeholder), Redis timeout threshold", async () => {
    const r = await renderStack("prod");
    const common = {
        EXECUTIONS_TIMEOUT: "300",
        EXECUTIONS_TIMEOUT_MAX: "600",
        N8N_CONCURRENCY_PRODUCTION_LIMIT: "5",
        QUEUE_BULL_REDIS_TIMEOUT_THRESHOLD: "60000",
    };
    for (const [sts, pool] of [[main(r), "10"], [workers(r), "5"]] as const) {
        const c = container(sts);
        for (const [k, v] of Object.entries(common)) assert.equal(env(c, k)?.value, v, `${sts.metadata.name}: ${k}`);
        assert.equal(env(c, "DB_POSTGRESDB_POOL_SIZE").value, pool);
        // Table 8.2's neutral WF_ prefix is a placeholder: n8n reads none of those names.
        assert.deepEqual(c.env.filter((e: any) => /^WF_/.test(e.name)), []);
        assert.equal(env(c, "N8N_PORT").value, "5678");
        assert.equal(env(c, "N8N_PROTOCOL").value, "https");
        assert.equal(env(c, "N8N_USER_FOLDER").value, "/data");
        assert.ok(c.volumeMounts.some((m: any) => m.mountPath === "/data" && !m.readOnly));
        assert.equal(env(c, "N8N_DIAGNOSTICS_ENABLED").value, "false");
    }
});

test("PostgreSQL and Redis connection: hosts in the data namespace, credentials only through secretKeyRef", async () => {
    const r = await renderStack("prod");
    for (const sts of [main(r), workers(r)]) {
        const c = container(sts);
        assert.equal(env(c, "DB_TYPE").value, "postgresdb");
        assert.equal(env(c, "DB_POSTGRESDB_HOST").value, "postgres.data.svc.cluster.local");
        assert.equal(env(c, "DB_POSTGRESDB_PORT").value, "5432");
        assert.equal(env(c, "DB_POSTGRESDB_DATABASE").value, "workflow");
        assert.equal(env(c, "QUEUE_BULL_REDIS_HOST").value, "redis.data.svc.cluster.local");
        assert.equal(env(c, "QUEUE_BULL_REDIS_PORT").value, "6379");
        const refs = Object.fromEntries(c.env.filter((e: any) => e.valueFrom).map((e: any) => [e.name, `${e.valueFrom.secretKeyRef.name}/${e.valueFrom.secretKeyRef.key}`]));
        assert.deepEqual(refs, {
            DB_POSTGRESDB_USER: "workflow-postgres/username",
            DB_POSTGRESDB_PASSWORD: "workflow-postgres/password",
            QUEUE_BULL_REDIS_PASSWORD: "workflow-redis/password",
            N8N_ENCRYPTION_KEY: "workflow-encryption/encryption-key",
            GATEWAY_TOKEN: "workflow-external/gateway-token",
            MODEL_API_KEY: "workflow-external/model-api-key",
        });
    }
    assert.ok(r.resources.some((x) => x.type === "random:index/randomPassword:RandomPassword" && x.name === "workflow-encryption-key"));
    assert.deepEqual(Object.keys(find(r, "Secret", "workflow-external", NS).stringData).sort(), ["gateway-token", "model-api-key"]);
});

test("probes on /healthz (liveness) and /healthz/readiness (readiness); resources; 50Gi volume each", async () => {
    const r = await renderStack("prod");
    for (const sts of [main(r), workers(r)]) {
        const c = container(sts);
        assert.equal(c.livenessProbe.httpGet.path, "/healthz");
        assert.equal(c.readinessProbe.httpGet.path, "/healthz/readiness");
        assert.equal(c.ports[0].containerPort, 5678);
        assert.ok(c.resources.requests.cpu && c.resources.limits.memory);
        assert.ok(c.lifecycle.preStop.sleep.seconds > 0);
        assert.equal(c.securityContext.readOnlyRootFilesystem, true);
        assert.equal(sts.spec.volumeClaimTemplates[0].spec.resources.requests.storage, "50Gi");
    }
});

test("prod: main and workers are StatefulSets with Guaranteed QoS (requests equal limits); data kept on delete", async () => {
    const r = await renderStack("prod");
    for (const sts of [main(r), workers(r)]) {
        const c = container(sts);
        // The QoS class is decided by cpu and memory only (ephemeral-storage has its own request and limit).
        const qos = (x: any) => ({ cpu: x.cpu, memory: x.memory });
        assert.deepEqual(qos(c.resources.requests), qos(c.resources.limits), sts.metadata.name);
        assert.deepEqual(sts.spec.persistentVolumeClaimRetentionPolicy, { whenDeleted: "Retain", whenScaled: "Retain" });
    }
    const bad = await renderStack("prod", { workflowWorkerRequestsCpu: "500m" });
    assert.ok(bad.errors.some((e) => /ops:workflowWorkerRequestsCpu: .*Guaranteed QoS/.test(e)), bad.errors.join("\n"));
});

test("two hosts: the editor, and /webhook on a separate host, both with proxy-read-timeout 300", async () => {
    const r = await renderStack("prod");
    const editor = find(r, "Ingress", "workflow-editor", NS);
    const webhook = find(r, "Ingress", "workflow-webhook", NS);
    assert.notEqual(editor.spec.rules[0].host, webhook.spec.rules[0].host);
    assert.equal(editor.spec.rules[0].http.paths[0].path, "/");
    assert.equal(webhook.spec.rules[0].http.paths[0].path, "/webhook");
    for (const ing of [editor, webhook]) {
        assert.equal(ing.metadata.annotations["nginx.ingress.kubernetes.io/proxy-read-timeout"], "300");
        assert.equal(ing.spec.rules[0].http.paths[0].backend.service.name, "workflow-main");
        assert.equal(ing.spec.tls[0].hosts[0], ing.spec.rules[0].host);
    }
    for (const sts of [main(r), workers(r)]) {
        const c = container(sts);
        assert.equal(env(c, "WEBHOOK_URL").value, `https://${webhook.spec.rules[0].host}/`);
        assert.equal(env(c, "N8N_HOST").value, editor.spec.rules[0].host);
        // n8n builds invite links and OAuth callback URLs from N8N_EDITOR_BASE_URL: the editor host, not the webhook host.
        assert.equal(env(c, "N8N_EDITOR_BASE_URL").value, `https://${editor.spec.rules[0].host}/`);
    }
});

test("RBAC: Role + RoleBinding in exactly two namespaces, only applications and deployments, no create/delete", async () => {
    const r = await renderStack("prod");
    const roles = (all(r, "Role") as any[]).filter((x) => x.metadata.name === "workflow-gitops");
    assert.deepEqual(roles.map((x) => x.metadata.namespace).sort(), ["argocd", "booking"]);
    for (const role of roles) {
        assert.deepEqual(role.rules, [
            { apiGroups: ["argoproj.io"], resources: ["applications"], verbs: ["get", "list", "patch"] },
            { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list", "patch"] },
        ]);
    }
    const bindings = (all(r, "RoleBinding") as any[]).filter((x) => x.metadata.name === "workflow-gitops");
    assert.deepEqual(bindings.map((x) => x.metadata.namespace).sort(), ["argocd", "booking"]);
    for (const b of bindings) {
        assert.deepEqual(b.subjects, [{ kind: "ServiceAccount", name: "workflow", namespace: NS }]);
        assert.deepEqual(b.roleRef, { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "workflow-gitops" });
    }
    assert.equal((all(r, "ClusterRoleBinding") as any[]).filter((x) => JSON.stringify(x.subjects ?? []).includes('"workflow"')).length, 0);
    const bad = await renderStack("prod", { workflowRbacNamespaces: ["argocd", "booking", "agent"] });
    assert.ok(bad.errors.some((e) => /ops:workflowRbacNamespaces: .*exactly two distinct namespaces/.test(e)), bad.errors.join("\n"));
});

test("only the workers (which run the production executions) mount the bound service account's token; main has none", async () => {
    const r = await renderStack("prod");
    const w = podSpecOf(workers(r));
    assert.equal(w.serviceAccountName, "workflow");
    // Not automounted (the no-automount-token constraint): the same files, declared, in the worker container only.
    assert.equal(w.automountServiceAccountToken, false);
    const api = w.volumes.find((v: any) => v.name === "kube-api-access");
    assert.deepEqual(api.projected.sources, [
        { serviceAccountToken: { path: "token", expirationSeconds: 3607 } },
        { configMap: { name: "kube-root-ca.crt", items: [{ key: "ca.crt", path: "ca.crt" }] } },
        { downwardAPI: { items: [{ path: "namespace", fieldRef: { apiVersion: "v1", fieldPath: "metadata.namespace" } }] } },
    ]);
    assert.deepEqual(w.containers[0].volumeMounts.find((m: any) => m.name === "kube-api-access"), { name: "kube-api-access", mountPath: "/var/run/secrets/kubernetes.io/serviceaccount", readOnly: true });
    assert.equal(podSpecOf(main(r)).volumes.some((v: any) => v.name === "kube-api-access"), false);
    // n8n 1.68 has no setting to offload manual executions: they run on main (which has no token).
    assert.equal(env(w.containers[0], "OFFLOAD_MANUAL_EXECUTIONS_TO_WORKERS"), undefined);
    const m = podSpecOf(main(r));
    assert.equal(m.serviceAccountName, "workflow-main");
    assert.equal(m.automountServiceAccountToken, false);
    assert.equal(find(r, "ServiceAccount", "workflow", NS).automountServiceAccountToken, false);
    for (const cj of (all(r, "CronJob") as any[]).filter((x) => x.metadata.namespace === NS)) assert.equal(podSpecOf(cj).automountServiceAccountToken, false);
});

test("workers: cpu autoscaler from 2 (requests set) and a disruption budget", async () => {
    const r = await renderStack("prod");
    const hpa = find(r, "HorizontalPodAutoscaler", "workflow-worker", NS);
    assert.deepEqual(hpa.spec.scaleTargetRef, { apiVersion: "apps/v1", kind: "StatefulSet", name: "workflow-worker" });
    assert.equal(hpa.spec.minReplicas, 2);
    assert.ok(hpa.spec.maxReplicas >= 2);
    assert.equal(hpa.spec.metrics[0].resource.name, "cpu");
    assert.ok(container(workers(r)).resources.requests.cpu);
    const pdb = find(r, "PodDisruptionBudget", "workflow-worker", NS);
    assert.deepEqual(pdb.spec.selector.matchLabels, workers(r).spec.selector.matchLabels);
});

test("network: ingress controller -> main only; main and workers -> PostgreSQL, Redis, internet 443; workers -> API server", async () => {
    const r = await renderStack("prod");
    const pm = find(r, "NetworkPolicy", "workflow-main", NS);
    assert.equal(pm.spec.ingress.length, 1);
    assert.deepEqual(pm.spec.ingress[0].from, [{ namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "ingress-nginx" } } }]);
    assert.deepEqual(pm.spec.ingress[0].ports, [{ port: 5678, protocol: "TCP" }]);
    const pw = find(r, "NetworkPolicy", "workflow-worker", NS);
    assert.deepEqual(pw.spec.ingress ?? [], []);
    const targets = (p: K8sObject) => p.spec.egress.slice(1).map((e: any) => {
        const to = e.to[0];
        const who = to.ipBlock ? to.ipBlock.cidr : `${to.namespaceSelector.matchLabels["kubernetes.io/metadata.name"]}/${to.podSelector.matchLabels["app.kubernetes.io/name"]}`;
        return `${who}:${e.ports.map((x: any) => x.port).join(",")}`;
    });
    assert.deepEqual(targets(pm), ["data/postgres:5432", "data/redis:6379", "0.0.0.0/0:443"]);
    const workerTargets = targets(pw);
    assert.deepEqual(workerTargets.slice(0, 3), ["data/postgres:5432", "data/redis:6379", "0.0.0.0/0:443"]);
    assert.equal(workerTargets.length, 4);
    assert.match(workerTargets[3], /:443,6443$|:6443$/);
    // Internet egress excludes private ranges: the model API, not the cluster.
    assert.ok(pm.spec.egress[3].to[0].ipBlock.except.includes("10.0.0.0/8"));
});

test("backup: daily CLI export of workflows and credentials in the tool's image, Forbid, with a suspended restore", async () => {
    const r = await renderStack("prod");
    const cj = find(r, "CronJob", "workflow-backup", NS);
    assert.equal(cj.spec.schedule, "0 2 * * *");
    assert.equal(cj.spec.concurrencyPolicy, "Forbid");
    assert.equal(cj.spec.successfulJobsHistoryLimit, 3);
    assert.equal(cj.spec.failedJobsHistoryLimit, 3);
    assert.equal(cj.spec.jobTemplate.spec.activeDeadlineSeconds, 3600);
    const c = podSpecOf(cj).containers[0];
    assert.equal(c.image, container(main(r)).image);
    assert.equal(env(c, "WF_BACKUP_MODE").value, "cli");
    assert.equal(env(c, "WF_EXPORT_CREDENTIALS").value, "true");
    // The export job decrypts nothing, but n8n refuses a settings file without the instance's key: the same Secret as main and workers.
    assert.deepEqual(env(c, "N8N_ENCRYPTION_KEY").valueFrom.secretKeyRef, { name: "workflow-encryption", key: "encryption-key" });
    assert.deepEqual(env(container(main(r)), "N8N_ENCRYPTION_KEY").valueFrom.secretKeyRef, env(c, "N8N_ENCRYPTION_KEY").valueFrom.secretKeyRef);
    assert.deepEqual(env(container(workers(r)), "N8N_ENCRYPTION_KEY").valueFrom.secretKeyRef, env(c, "N8N_ENCRYPTION_KEY").valueFrom.secretKeyRef);
    assert.match(find(r, "ConfigMap", "workflow-backup-scripts", NS).data["backup.sh"], /^#!\/bin\/sh\n# workflow-backup\.sh/);
    const restore = find(r, "CronJob", "workflow-backup-restore", NS);
    assert.equal(restore.spec.suspend, true);
    assert.deepEqual(podSpecOf(restore).containers[0].command, ["sh", "/scripts/restore.sh"]);
});

test("no secret value in any ConfigMap, env literal or annotation (both stacks)", async () => {
    for (const stack of ["dev", "prod"]) {
        const r = await renderStack(stack);
        const secretValues = (all(r, "Secret") as any[]).flatMap((s) => Object.values({ ...(s.stringData ?? {}), ...(s.data ?? {}) }))
            .filter((v): v is string => typeof v === "string" && v.length >= 16);
        assert.ok(secretValues.length >= 8);
        const inspected = r.objects.filter((o) => ["data", NS].includes(o.metadata?.namespace ?? ""));
        for (const o of inspected) {
            const places: string[] = [JSON.stringify(o.metadata?.annotations ?? {})];
            if (o.kind === "ConfigMap") places.push(JSON.stringify(o.data ?? {}));
            if (["StatefulSet", "CronJob", "Job"].includes(o.kind ?? "")) {
                const pod = podSpecOf(o.kind === "Job" ? { ...o, kind: "Deployment" } : o);
                for (const c of [...(pod.initContainers ?? []), ...pod.containers]) places.push(JSON.stringify((c.env ?? []).map((e: any) => e.value ?? "")), JSON.stringify(c.args ?? []), JSON.stringify(c.command ?? []));
            }
            for (const v of secretValues) for (const p of places) assert.ok(!p.includes(v), `${stack}: a secret value appears in ${o.kind} ${o.metadata?.name}`);
        }
    }
});
