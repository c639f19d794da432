/**
 * The platform under the applications (sections 1, 2.1, 2.5, 2.6, 2.11, 5.7, 6.4, 8.1, 8.2):
 * namespaces and their guardrails, RBAC, issuers, add-on charts, vertical autoscalers, alerts,
 * node-agent and key-store settings, and the render's renderedFiles extension point.
 */
import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as YAML from "yaml";
import { cpuMillis, quantityBytes } from "../config/schema";
import { REDACTED } from "../cli/harness/manifests";
import { SECRET_SIG } from "../cli/harness/program";
import { renderedFiles, RenderResult, writeRender } from "../cli/harness/render";
import { offlineStackConfig } from "../tools/genGitops";
import { horizontallyScaled, workloadKey } from "../config/platformRules";
import { all as allObjects, find, renderStack } from "./render";

const STACKS = ["dev", "prod"];
const all = (r: RenderResult, kind: string) => allObjects(r, kind) as any[];
const objectsOf = (r: RenderResult) => r.objects as any[];
const chartResources = (r: RenderResult) => r.resources.filter((x) => x.type === "kubernetes:helm.sh/v3:Release");
const chart = (r: RenderResult, name: string) => {
    const c = chartResources(r).find((x) => (x.inputs as any).chart === name);
    assert.ok(c, `no chart ${name}`);
    return c.inputs as any;
};
const urnOf = (r: RenderResult, type: string, name: string) => r.resources.find((x) => x.type === type && x.name === name)!.urn;

async function renderError(stack: string, overrides: Record<string, unknown>): Promise<string> {
    const r = await renderStack(stack, overrides);
    return r.errors.join("\n");
}

test("every namespaced object lives in a Namespace the program declares (no area is forgotten)", async () => {
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        const declared = new Set(all(r, "Namespace").map((n) => n.metadata.name));
        for (const ns of ["agent", "data", "workflow", "booking", "search", "column-store", "ingress-nginx", "cert-manager", "reloader", "metrics", "vpa", "argocd", "monitoring", "uptime", "chat", "dashboard"])
            assert.ok(declared.has(ns), `${stack}: namespace ${ns} missing`);
        for (const o of objectsOf(r).filter((x) => x.metadata?.namespace))
            assert.ok(declared.has(o.metadata.namespace), `${stack}: ${o.kind} ${o.metadata.name} is in undeclared namespace ${o.metadata.namespace}`);
        for (const c of chartResources(r)) assert.ok(declared.has((c.inputs as any).namespace), `chart ${(c.inputs as any).chart} installs into an undeclared namespace`);
    }
});

test("every namespace: LimitRange (Container defaults), ResourceQuota, default-deny both ways, DNS allowed", async () => {
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        const cfg = offlineStackConfig(stack);
        for (const ns of all(r, "Namespace").map((n) => n.metadata.name)) {
            const lr = find(r, "LimitRange", "container-defaults", ns);
            const limit = lr.spec.limits.find((l: any) => l.type === "Container");
            assert.ok(limit, `${ns}: no Container limit`);
            assert.equal(limit.default.memory, cfg.guardrails.limitRange.defaultMemory);
            assert.equal(limit.defaultRequest.memory, cfg.guardrails.limitRange.defaultRequestMemory);
            assert.ok(limit.default.cpu && limit.defaultRequest.cpu);

            const quota = find(r, "ResourceQuota", "namespace-quota", ns);
            for (const key of ["requests.cpu", "requests.memory", "limits.cpu", "limits.memory", "requests.storage", "pods"]) assert.ok(quota.spec.hard[key], `${ns}: quota without ${key}`);

            const deny = find(r, "NetworkPolicy", "default-deny", ns);
            assert.deepEqual(deny.spec.podSelector, {});
            assert.deepEqual([...deny.spec.policyTypes].sort(), ["Egress", "Ingress"]);
            assert.equal(deny.spec.ingress, undefined);
            assert.equal(deny.spec.egress, undefined);

            const dns = find(r, "NetworkPolicy", "allow-dns", ns);
            assert.deepEqual(dns.spec.podSelector, {});
            assert.deepEqual(dns.spec.policyTypes, ["Egress"]);
            const ports = dns.spec.egress.flatMap((e: any) => e.ports.map((p: any) => `${p.protocol}/${p.port}`)).sort();
            assert.deepEqual(ports, ["TCP/53", "UDP/53"]);
            assert.equal(dns.spec.egress[0].to[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"], "kube-system");
        }
    }
});

test("quota overrides raise single namespaces; a malformed or unknown one fails with the key", async () => {
    const prod = await renderStack("prod");
    assert.equal(find(prod, "ResourceQuota", "namespace-quota", "column-store").spec.hard["limits.memory"], "48Gi");
    assert.equal(find(prod, "ResourceQuota", "namespace-quota", "uptime").spec.hard["limits.memory"], "16Gi");
    assert.match(await renderError("dev", { guardrailsQuotaOverrides: JSON.stringify(["search:limits.mem=1Gi"]) }), /guardrailsQuotaOverrides: "limits.mem" is not a quota resource/);
    assert.match(await renderError("dev", { guardrailsQuotaOverrides: JSON.stringify(["nowhere:pods=3"]) }), /guardrailsQuotaOverrides names namespaces that do not exist: nowhere/);
});

/** Each namespace's quota holds its own workloads at their largest (autoscaler maximum) plus one rolling-update surge pod. */
test("each namespace's quota fits the workloads the program puts there (a quota must not block a rollout)", async () => {
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        const hpaMax = new Map(all(r, "HorizontalPodAutoscaler").map((h) => [`${h.metadata.namespace}/${h.spec.scaleTargetRef.name}`, h.spec.maxReplicas as number]));
        const demand = new Map<string, { rc: number; rm: number; lc: number; lm: number; storage: number; pods: number }>();
        const add = (ns: string, pods: number, spec: any) => {
            const d = demand.get(ns) ?? { rc: 0, rm: 0, lc: 0, lm: 0, storage: 0, pods: 0 };
            for (const c of spec?.containers ?? []) {
                d.rc += pods * cpuMillis(c.resources.requests.cpu);
                d.rm += pods * quantityBytes(c.resources.requests.memory);
                d.lc += pods * cpuMillis(c.resources.limits.cpu);
                d.lm += pods * quantityBytes(c.resources.limits.memory);
            }
            d.pods += pods;
            demand.set(ns, d);
            return d;
        };
        for (const o of objectsOf(r)) {
            const ns = o.metadata?.namespace;
            if (o.kind === "Deployment") {
                const n = hpaMax.get(`${ns}/${o.metadata.name}`) ?? o.spec.replicas ?? 1;
                add(ns, n + (o.spec.strategy?.type === "Recreate" ? 0 : 1), o.spec.template.spec);
            } else if (o.kind === "StatefulSet") {
                const n = hpaMax.get(`${ns}/${o.metadata.name}`) ?? o.spec.replicas ?? 1;
                const d = add(ns, n, o.spec.template.spec);
                for (const t of o.spec.volumeClaimTemplates ?? []) d.storage += n * quantityBytes(t.spec.resources.requests.storage);
            } else if (o.kind === "CronJob" && !o.spec.suspend) add(ns, 1, o.spec.jobTemplate.spec.template.spec);
            else if (o.kind === "Job") add(ns, 1, o.spec.template.spec);
            else if (o.kind === "PersistentVolumeClaim") add(ns, 0, undefined).storage += quantityBytes(o.spec.resources.requests.storage);
        }
        const short: string[] = [];
        for (const [ns, d] of demand) {
            const hard = find(r, "ResourceQuota", "namespace-quota", ns).spec.hard;
            const fits = (what: string, need: number, have: number) => need <= have || short.push(`${stack}/${ns}: ${what} needs ${need}, quota allows ${have}`);
            fits("requests.cpu (m)", d.rc, cpuMillis(hard["requests.cpu"]));
            fits("limits.cpu (m)", d.lc, cpuMillis(hard["limits.cpu"]));
            fits("requests.memory", d.rm, quantityBytes(hard["requests.memory"]));
            fits("limits.memory", d.lm, quantityBytes(hard["limits.memory"]));
            fits("requests.storage", d.storage, quantityBytes(hard["requests.storage"]));
            fits("pods", d.pods, Number(hard.pods));
        }
        assert.deepEqual(short, []);
    }
});

const ANONYMOUS = new Set(["User/system:anonymous", "Group/system:unauthenticated", "Group/system:anonymous", "User/system:unauthenticated"]);
const anonymousSubjects = (objects: any[]) =>
    objects
        .filter((o) => o.kind === "RoleBinding" || o.kind === "ClusterRoleBinding")
        .flatMap((b) => (b.subjects ?? []).filter((s: any) => ANONYMOUS.has(`${s.kind}/${s.name}`)).map((s: any) => `${b.kind} ${b.metadata.name} -> ${s.name}`));

test("RBAC: nothing in the render binds to system:anonymous or system:unauthenticated", async () => {
    const crafted = { kind: "ClusterRoleBinding", metadata: { name: "bad" }, subjects: [{ kind: "Group", name: "system:unauthenticated" }] };
    assert.deepEqual(anonymousSubjects([crafted]), ["ClusterRoleBinding bad -> system:unauthenticated"]);
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        assert.deepEqual(anonymousSubjects(objectsOf(r)), []);
        // Argo CD's anonymous access is off in its own configuration.
        assert.equal(chart(r, "argo-cd").values.configs.cm["users.anonymous.enabled"], "false");
    }
});

test("issuers: self-signed-ca-issuer on a generated CA in a kubernetes.io/tls Secret; lets-encrypt by ACME http01 on nginx", async () => {
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        assert.deepEqual(all(r, "ClusterIssuer").map((i) => i.metadata.name).sort(), ["lets-encrypt", "self-signed-ca-issuer"]);
        const ca = find(r, "ClusterIssuer", "self-signed-ca-issuer");
        const secret = find(r, "Secret", ca.spec.ca.secretName, "cert-manager");
        assert.equal(secret.type, "kubernetes.io/tls");
        assert.match(secret.stringData["tls.key"], /BEGIN .*PRIVATE KEY/);
        const key = r.resources.find((x) => x.type === "tls:index/privateKey:PrivateKey" && x.name === "issuers-ca-key");
        const cert = r.resources.find((x) => x.type === "tls:index/selfSignedCert:SelfSignedCert");
        assert.ok(key && cert);
        assert.equal((cert.inputs as any).isCaCertificate, true);
        assert.ok((cert.inputs as any).allowedUses.includes("cert_signing"));
        // The key material never reaches the written files.
        assert.ok(!r.manifests.includes(secret.stringData["tls.key"]));
        assert.ok(!r.resourcesJson.includes(secret.stringData["tls.key"]));
        const redacted = (r.redactedObjects as any[]).find((o) => o.kind === "Secret" && o.metadata.name === secret.metadata.name)!;
        assert.equal(redacted.stringData["tls.key"], REDACTED);

        const le = find(r, "ClusterIssuer", "lets-encrypt");
        assert.equal(le.spec.acme.email, "ops@example.com");
        assert.equal(le.spec.acme.server, stack === "prod" ? "https://acme-v02.api.letsencrypt.org/directory" : "https://acme-staging-v02.api.letsencrypt.org/directory");
        // The solver pods get the labels pod-app-labels asks for (cert-manager merges podTemplate labels into them).
        assert.deepEqual(le.spec.acme.solvers, [{ http01: { ingress: { class: "nginx", podTemplate: { metadata: { labels: { "app.kubernetes.io/name": "cert-manager-acmesolver", "app.kubernetes.io/instance": "lets-encrypt", "app.kubernetes.io/component": "acme-solver" } } } } } }]);

        const certManager = urnOf(r, "kubernetes:helm.sh/v3:Release", "addons-cert-manager");
        for (const i of r.resources.filter((x) => x.type === "kubernetes:cert-manager.io/v1:ClusterIssuer")) assert.ok(i.dependencies.includes(certManager), `${i.name} does not wait for cert-manager`);
    }
    assert.match(await renderError("prod", { issuersAcmeServer: "https://acme-staging-v02.api.letsencrypt.org/directory" }), /issuersAcmeServer: .* is not the production server; expected https:\/\/acme-v02/);
});

test("ACME http01 solver pods are reachable from the ingress controller in every namespace", async () => {
    const r = await renderStack("prod");
    for (const ns of all(r, "Namespace").map((n) => n.metadata.name)) {
        const p = find(r, "NetworkPolicy", "allow-acme-http01-solver", ns);
        assert.deepEqual(p.spec.podSelector.matchLabels, { "acme.cert-manager.io/http01-solver": "true" });
        assert.equal(p.spec.ingress[0].from[0].namespaceSelector.matchLabels["kubernetes.io/metadata.name"], "ingress-nginx");
    }
});

test("add-ons: seven charts pinned to exact versions, values free of secrets, CRD users wait for them", async () => {
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        const charts = chartResources(r).map((c) => c.inputs as any);
        assert.deepEqual(charts.map((c) => c.chart).sort(), ["argo-cd", "cert-manager", "ingress-nginx", "kube-prometheus-stack", "metrics-server", "reloader", "vpa"]);
        for (const c of charts) {
            assert.match(c.version, /^v?\d+\.\d+\.\d+$/, `${c.chart} is not pinned`);
            assert.match(c.repositoryOpts.repo, /^https:\/\//);
            assert.ok(!JSON.stringify(c.values).includes(SECRET_SIG), `${c.chart} values carry a secret`);
            assert.doesNotMatch(JSON.stringify(c.values), /password"\s*:/i, `${c.chart} values set a password`);
        }
        assert.deepEqual(chart(r, "cert-manager").values.crds, { enabled: true, keep: true });
        // helm releases, not helm v4 Charts: v4 never runs chart hooks (pulumi-kubernetes#3284), and
        // ingress-nginx, Argo CD, kube-prometheus-stack and VPA make Secrets/certificates in hooks.
        assert.equal(r.resources.filter((x) => x.type === "kubernetes:helm.sh/v4:Chart").length, 0, "no helm v4 Chart");
        for (const c of charts) {
            assert.equal(c.name, c.chart === "kube-prometheus-stack" ? "kube-prometheus-stack" : c.chart, `${c.chart}: fixed release name`);
            assert.equal(c.waitForJobs, true, `${c.chart}: waits for its hook Jobs`);
            assert.equal(c.timeout, 600);
            assert.notEqual(c.skipCrds, true, `${c.chart}: installs its CRDs`);
        }
        const byName = (n: string) => r.resources.find((x) => x.name === n)!;
        assert.ok(byName("monitoring-rules").dependencies.includes(urnOf(r, "kubernetes:helm.sh/v3:Release", "addons-kube-prometheus-stack")));
        assert.ok(byName("gitops-parent").dependencies.includes(urnOf(r, "kubernetes:helm.sh/v3:Release", "addons-argo-cd")));
        // Ingresses are admitted by the controller's webhook: every Ingress waits for its chart (test/engineOrder.test.ts: only they).
        const ingressChart = urnOf(r, "kubernetes:helm.sh/v3:Release", "addons-ingress-nginx");
        const ingresses = r.resources.filter((x) => x.type === "kubernetes:networking.k8s.io/v1:Ingress");
        assert.ok(ingresses.length > 0 && ingresses.every((x) => x.dependencies.includes(ingressChart)));
    }
});

test("ingress controller settings of section 8.2 through the chart values", async () => {
    const r = await renderStack("prod");
    const config = chart(r, "ingress-nginx").values.controller.config;
    assert.equal(config["upstream-keepalive-connections"], "50");
    assert.equal(config["upstream-keepalive-timeout"], "60");
    assert.equal(config["proxy-connect-timeout"], "300");
    assert.equal(config["proxy-send-timeout"], "300");
    assert.equal(config["proxy-read-timeout"], "600");
    assert.equal(config["proxy-body-size"], "50m");
    assert.equal(chart(r, "ingress-nginx").values.controller.ingressClassResource.name, "nginx");
});

test("the reloader watches exactly the annotation keys the workloads carry", async () => {
    const r = await renderStack("dev");
    const custom = chart(r, "reloader").values.reloader.custom_annotations;
    const used = new Set(objectsOf(r).filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet").flatMap((o) => Object.keys(o.metadata.annotations ?? {})).filter((k) => k.endsWith("/reload")));
    assert.ok(used.size > 0);
    for (const key of used) assert.ok([custom.configmap, custom.secret].includes(key), `${key} is not watched`);
});

test("add-on namespaces: each has a policy for its pods (default-deny would stop them otherwise)", async () => {
    const r = await renderStack("prod");
    for (const [ns, name] of [["ingress-nginx", "ingress-nginx-allow"], ["cert-manager", "cert-manager-allow"], ["reloader", "reloader-allow"], ["metrics", "metrics-server-allow"], ["vpa", "vpa-allow"], ["argocd", "argo-cd-allow"], ["monitoring", "monitoring-allow"]]) {
        const p = find(r, "NetworkPolicy", name, ns);
        assert.deepEqual(p.spec.podSelector, {}, "every pod of the namespace");
        assert.ok(p.spec.egress.length > 1);
    }
    const ingress = find(r, "NetworkPolicy", "ingress-nginx-allow", "ingress-nginx");
    assert.deepEqual(ingress.spec.ingress[0].ports.map((p: any) => p.port), [80, 443]);
});

test("vertical autoscalers: targetRef and updateMode Auto for configured workloads, after the VPA chart", async () => {
    const r = await renderStack("dev", { verticalAutoscalingTargets: JSON.stringify(["Deployment/agent/agent-server-4000"]) });
    assert.deepEqual(r.errors, []);
    const vpa = find(r, "VerticalPodAutoscaler", "agent-server-4000", "agent");
    assert.equal(vpa.apiVersion, "autoscaling.k8s.io/v1");
    assert.deepEqual(vpa.spec.targetRef, { apiVersion: "apps/v1", kind: "Deployment", name: "agent-server-4000" });
    assert.equal(vpa.spec.updatePolicy.updateMode, "Auto");
    const res = r.resources.find((x) => x.type === "kubernetes:autoscaling.k8s.io/v1:VerticalPodAutoscaler")!;
    assert.ok(res.dependencies.includes(urnOf(r, "kubernetes:helm.sh/v3:Release", "addons-vpa")));
});

test("vertical autoscalers never on a workload with a horizontal autoscaler; the HPA list matches the render", async () => {
    assert.match(
        await renderError("dev", { verticalAutoscalingTargets: JSON.stringify(["Deployment/agent/model-bridge"]) }),
        /verticalAutoscalingTargets: Deployment\/agent\/model-bridge already has a horizontal autoscaler/,
    );
    assert.match(await renderError("dev", { verticalAutoscalingTargets: JSON.stringify(["agent/model-bridge"]) }), /verticalAutoscalingTargets: .*expected a list/);
    for (const stack of STACKS) {
        const r = await renderStack(stack);
        const known = new Set(horizontallyScaled(offlineStackConfig(stack)).map(workloadKey));
        for (const h of all(r, "HorizontalPodAutoscaler")) {
            const key = `${h.spec.scaleTargetRef.kind}/${h.metadata.namespace}/${h.spec.scaleTargetRef.name}`;
            assert.ok(known.has(key), `${key} has an HPA but is missing from horizontallyScaled() in config/platformRules.ts`);
        }
    }
});

test("alerts: KubeNodeNotReady, KubeletDown and the key-store expressions of section 6.4", async () => {
    const r = await renderStack("prod");
    const rule = find(r, "PrometheusRule", "nodes-and-key-store", "monitoring");
    const rules = new Map<string, any>(rule.spec.groups.flatMap((g: any) => g.rules).map((x: any) => [x.alert, x]));
    assert.ok(rules.has("KubeNodeNotReady") && rules.has("KubeletDown"));
    assert.match(rules.get("KubeNodeNotReady").expr, /kube_node_status_condition\{.*condition="Ready".*status="true".*\} == 0/);
    assert.match(rules.get("KubeletDown").expr, /up\{job="kubelet"/);
    assert.equal(rules.get("EtcdWalFsyncSlow").expr, "histogram_quantile(0.99, rate(etcd_disk_wal_fsync_duration_seconds_bucket[5m])) > 0.025");
    assert.equal(rules.get("EtcdFrequentLeaderChanges").expr, "increase(etcd_server_leader_changes_seen_total[1h]) > 3");
    assert.equal(rules.get("EtcdNoLeader").expr, "etcd_server_has_leader == 0");
    assert.equal(rules.get("EtcdDatabaseNearQuota").expr, "etcd_mvcc_db_total_size_in_bytes / 8589934592 > 0.8");
    // The monitoring chart's own copies of the two node alerts are off, so each fires once.
    assert.deepEqual(chart(r, "kube-prometheus-stack").values.defaultRules.disabled, { KubeNodeNotReady: true, KubeletDown: true });
    const changed = await renderStack("prod", { alertsLeaderChangesPerHour: 5, alertsDbSizeQuotaPercent: 90 });
    const rules2 = find(changed, "PrometheusRule", "nodes-and-key-store", "monitoring").spec.groups.flatMap((g: any) => g.rules);
    assert.ok(rules2.some((x: any) => x.expr === "increase(etcd_server_leader_changes_seen_total[1h]) > 5"));
    assert.ok(rules2.some((x: any) => x.expr === "etcd_mvcc_db_total_size_in_bytes / 8589934592 > 0.9"));
});

test("node agent and key store: stack outputs and rendered files with the specification's values", async () => {
    const r = await renderStack("prod");
    const kubelet = YAML.parse(r.files["node/kubelet-config.yaml"]);
    assert.equal(kubelet.apiVersion, "kubelet.config.k8s.io/v1beta1");
    assert.equal(kubelet.kind, "KubeletConfiguration");
    assert.equal(kubelet.cgroupDriver, "systemd");
    for (const part of ["systemReserved", "kubeReserved"]) assert.deepEqual(Object.keys(kubelet[part]).sort(), ["cpu", "ephemeral-storage", "memory"]);
    assert.deepEqual(Object.keys(kubelet.evictionHard).sort(), ["memory.available", "nodefs.available"]);
    assert.equal(kubelet.nodeStatusReportFrequency, "10s");
    assert.equal(kubelet.nodeStatusUpdateFrequency, "10s");
    const env = r.files["node/etcd.env"];
    for (const line of ["ETCD_QUOTA_BACKEND_BYTES=8589934592", "ETCD_AUTO_COMPACTION_MODE=periodic", "ETCD_HEARTBEAT_INTERVAL=100", "ETCD_ELECTION_TIMEOUT=1000", "ETCD_SNAPSHOT_COUNT=100000"])
        assert.ok(env.split("\n").includes(line), `etcd.env lacks ${line}`);
    assert.match(env, /^ETCD_AUTO_COMPACTION_RETENTION=\d+[mh]$/m);
    const outputs = r.outputs.nodeSettings as any;
    assert.deepEqual(outputs.kubelet, kubelet);
    assert.equal(outputs.keyStore["quota-backend-bytes"], "8589934592");
    // The same values the files hold reach the alert on the key store's size.
    assert.match(JSON.stringify(find(r, "PrometheusRule", "nodes-and-key-store", "monitoring")), /\/ 8589934592 >/);
});

test("node agent and key store: values outside the specification's ranges fail with the key and the range", async () => {
    const cases: [string, Record<string, unknown>, RegExp][] = [
        ["prod", { keyStoreQuotaBackendBytes: 2147483648 }, /keyStoreQuotaBackendBytes: 2147483648 is outside .*; expected 8 to 16 GiB in prod/],
        ["dev", { keyStoreQuotaBackendBytes: 32 * 2 ** 30 }, /keyStoreQuotaBackendBytes: .* is outside/],
        ["dev", { keyStoreHeartbeatIntervalMs: 50 }, /keyStoreHeartbeatIntervalMs: 50 ms is outside 100..300 ms/],
        ["dev", { keyStoreElectionTimeoutMs: 3500 }, /keyStoreElectionTimeoutMs: 3500 ms is outside 1000..3000 ms/],
        ["dev", { keyStoreHeartbeatIntervalMs: 100, keyStoreElectionTimeoutMs: 1500 }, /keyStoreElectionTimeoutMs: 1500 ms is more than 10 times keyStoreHeartbeatIntervalMs \(100 ms\); expected an election-timeout of at most 1000 ms/],
        ["dev", { keyStoreAutoCompactionMode: "revision" }, /keyStoreAutoCompactionMode: .*expected one of periodic/],
        ["dev", { keyStoreAutoCompactionRetention: "ten minutes" }, /keyStoreAutoCompactionRetention: .*expected a duration/],
        ["dev", { nodeAgentCgroupDriver: "cgroupv2" }, /nodeAgentCgroupDriver: .*expected one of systemd, cgroupfs/],
        ["dev", { nodeAgentEvictionHardMemoryAvailable: "lots" }, /nodeAgentEvictionHardMemoryAvailable: .*a quantity such as "100Mi" or a percentage/],
        ["dev", { nodeAgentEvictionHardNodefsAvailable: "150%" }, /nodeAgentEvictionHardNodefsAvailable/],
        ["dev", { nodeAgentNodeStatusUpdateFrequency: 45 }, /nodeAgentNodeStatusUpdateFrequency: 45 s does not fit in the 40 s/],
        ["dev", { nodeAgentSystemReservedMemory: "0" }, /nodeAgentSystemReservedMemory: reserves nothing/],
    ];
    for (const [stack, overrides, expected] of cases) assert.match(await renderError(stack, overrides), expected, JSON.stringify(overrides));
    // Inside the ranges: accepted.
    const ok = await renderStack("dev", { keyStoreHeartbeatIntervalMs: 300, keyStoreElectionTimeoutMs: 3000, nodeAgentEvictionHardMemoryAvailable: "5%" });
    assert.deepEqual(ok.errors, []);
    assert.match(ok.files["node/etcd.env"], /^ETCD_ELECTION_TIMEOUT=3000$/m);
});

test("render extension: renderedFiles are written beside the manifests; bad paths, non-text and secret outputs are refused", async () => {
    assert.deepEqual(renderedFiles({}), { files: {}, errors: [] });
    assert.deepEqual(renderedFiles({ renderedFiles: { "node/a.env": "A=1\n" } }).files, { "node/a.env": "A=1\n" });
    for (const bad of ["../escape.txt", "/etc/passwd", "node/../../x", "manifests.yaml"]) assert.equal(renderedFiles({ renderedFiles: { [bad]: "x" } }).errors.length, 1, bad);
    assert.match(renderedFiles({ renderedFiles: { "a.txt": 3 } }).errors[0], /is not text/);
    assert.match(renderedFiles({ renderedFiles: { "a.txt": "x" } }, ["renderedFiles"]).errors[0], /secret/);

    const r = await renderStack("dev");
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "render-"));
    try {
        writeRender(r, dir);
        assert.equal(fs.readFileSync(path.join(dir, "node", "kubelet-config.yaml"), "utf8"), r.files["node/kubelet-config.yaml"]);
        assert.ok(fs.existsSync(path.join(dir, "node", "etcd.env")));
        assert.ok(fs.existsSync(path.join(dir, "manifests.yaml")));
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
