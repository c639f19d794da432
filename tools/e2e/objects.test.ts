import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { compareWithCluster, crdSchema, crdsFor, CrdSchemaFile, differences, fakeNode, K8sObject, objectDifferences, plural, quantity, standInVolumes } from "./objects";

const SCHEMAS = path.resolve(__dirname, "..", "..", "..", "shared", "reference", "k8s-schemas", "crds-deployed.json.gz");

const obj = (apiVersion: string, kind: string, name: string, namespace?: string, rest: Record<string, unknown> = {}): K8sObject =>
    ({ apiVersion, kind, metadata: { name, ...(namespace ? { namespace } : {}) }, ...rest });

const schema = { type: "object", properties: { spec: { type: "object" } } };
const FILE: CrdSchemaFile = {
    set: "test",
    kinds: {
        "autoscaling.k8s.io/v1beta2/VerticalPodAutoscaler": { namespaced: true, schema },
        "autoscaling.k8s.io/v1/VerticalPodAutoscaler": { namespaced: true, schema },
        "cert-manager.io/v1/ClusterIssuer": { namespaced: false, schema },
    },
};

test("CRDs: one per non-built-in kind used, every known version served, the newest stored, scope kept", () => {
    const crds = crdsFor([
        obj("v1", "ConfigMap", "c", "a"),
        obj("apps/v1", "Deployment", "d", "a"),
        obj("autoscaling/v2", "HorizontalPodAutoscaler", "h", "a"),
        obj("autoscaling.k8s.io/v1", "VerticalPodAutoscaler", "v", "a"),
        obj("cert-manager.io/v1", "ClusterIssuer", "i"),
    ], FILE, "test.json.gz");
    assert.deepEqual(crds.map((c) => c.metadata!.name), ["verticalpodautoscalers.autoscaling.k8s.io", "clusterissuers.cert-manager.io"]);
    const [vpa, issuer] = crds;
    assert.deepEqual(vpa.spec.versions.map((v: any) => [v.name, v.served, v.storage]), [["v1", true, true], ["v1beta2", true, false]]);
    assert.equal(vpa.spec.scope, "Namespaced");
    assert.equal(issuer.spec.scope, "Cluster");
    assert.deepEqual(issuer.spec.names, { kind: "ClusterIssuer", listKind: "ClusterIssuerList", plural: "clusterissuers", singular: "clusterissuer" });
    assert.deepEqual(vpa.spec.versions[0].schema.openAPIV3Schema, schema);
});

test("CRDs: the extractor's x-deprecated marks are dropped, a property named so is kept", () => {
    const s = { type: "object", properties: { old: { type: "string", "x-deprecated": true }, "x-deprecated": { type: "string" } } };
    assert.deepEqual(crdSchema(s), { type: "object", properties: { old: { type: "string" }, "x-deprecated": { type: "string" } } });
});

test("CRDs: a kind the schema file lacks is an error naming it", () => {
    assert.throws(() => crdsFor([obj("argoproj.io/v1alpha1", "Application", "a", "argocd")], FILE, "test.json.gz"),
        /test\.json\.gz has no schema for argoproj\.io\/v1alpha1 Application/);
});

test("CRDs: plurals outside the plain-s rule are refused, not guessed", () => {
    assert.equal(plural("PrometheusRule"), "prometheusrules");
    assert.throws(() => plural("Policy"), /no plural rule for kind Policy/);
    assert.throws(() => plural("Ingress"), /no plural rule/);
});

test("CRDs from the pinned schemas of shared/ for the kinds of the ci render", (t) => {
    if (!fs.existsSync(SCHEMAS)) {
        if (process.env.CI === "true") assert.fail(`${SCHEMAS} is missing under CI=true`);
        t.skip(`${SCHEMAS} is missing (shared/ is not beside the repository)`);
        return;
    }
    const file = JSON.parse(zlib.gunzipSync(fs.readFileSync(SCHEMAS)).toString("utf8")) as CrdSchemaFile;
    const crds = crdsFor([
        obj("argoproj.io/v1alpha1", "Application", "ops-apps", "argocd"),
        obj("cert-manager.io/v1", "ClusterIssuer", "self-signed-ca-issuer"),
        obj("monitoring.coreos.com/v1", "PrometheusRule", "r", "monitoring"),
    ], file, "crds-deployed.json.gz");
    assert.deepEqual(crds.map((c) => `${c.metadata!.name} ${c.spec.scope}`),
        ["applications.argoproj.io Namespaced", "clusterissuers.cert-manager.io Cluster", "prometheusrules.monitoring.coreos.com Namespaced"]);
    for (const c of crds) assert.equal(c.spec.versions[0].schema.openAPIV3Schema.type, "object", c.metadata!.name);
});

test("stand-in volumes: one pre-bound PersistentVolume per claim, StatefulSet claims by ordinal", () => {
    const pvs = standInVolumes([
        obj("v1", "PersistentVolumeClaim", "data", "booking", { spec: { accessModes: ["ReadWriteOnce"], resources: { requests: { storage: "1Gi" } } } }),
        obj("apps/v1", "StatefulSet", "pg", "data", {
            spec: { replicas: 2, volumeClaimTemplates: [{ metadata: { name: "db" }, spec: { storageClassName: "fast", resources: { requests: { storage: "5Gi" } } } }] },
        }),
    ], "/v");
    assert.deepEqual(pvs.map((p) => [p.metadata!.name, p.spec.claimRef.namespace, p.spec.claimRef.name, p.spec.capacity.storage, p.spec.storageClassName]), [
        ["e2e-booking-data", "booking", "data", "1Gi", "e2e-standin"],
        ["e2e-data-db-pg-0", "data", "db-pg-0", "5Gi", "fast"],
        ["e2e-data-db-pg-1", "data", "db-pg-1", "5Gi", "fast"],
    ]);
    assert.equal(pvs[0].spec.hostPath.path, "/v/booking/data");
    assert.throws(() => standInVolumes([obj("v1", "PersistentVolumeClaim", "x", "n", { spec: {} })], "/v"), /claim n\/x requests no storage/);
});

test("fake node: capacity less the kubelet's reservations and hard-eviction thresholds", () => {
    const node = fakeNode("n0", { cpu: "4", memory: "16Gi", pods: "110", ephemeralStorage: "14Gi" }, {
        systemReserved: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
        kubeReserved: { cpu: "500m", memory: "512Mi", "ephemeral-storage": "1Gi" },
        evictionHard: { "memory.available": "100Mi", "nodefs.available": "10%" },
    });
    // 16384 - 512 - 512 - 100 MiB; 14336 - 2048 - 1433.6 MiB
    assert.deepEqual(node.status.allocatable, { cpu: "3000m", memory: "15260Mi", pods: "110", "ephemeral-storage": "10854Mi" });
    assert.equal(node.metadata!.annotations!["kwok.x-k8s.io/node"], "fake");
    assert.throws(() => fakeNode("n1", { cpu: "1", memory: "1Gi", pods: "10", ephemeralStorage: "1Gi" }, { systemReserved: { cpu: "2" } }), /reserves more than its capacity/);
});

test("quantities compare by amount", () => {
    assert.equal(quantity("500m"), 0.5);
    assert.equal(quantity("1Gi"), 2 ** 30);
    assert.equal(quantity("2k"), 2000);
    assert.equal(quantity("abc"), undefined);
    assert.deepEqual(differences({ cpu: "0.5", memory: "1024Mi" }, { cpu: "500m", memory: "1Gi" }), []);
    assert.deepEqual(differences({ cpu: "1" }, { cpu: "2" }), ['.cpu: rendered "1", cluster has "2"']);
});

test("differences: server-added fields are ignored, changed or missing ones reported", () => {
    const want = obj("apps/v1", "Deployment", "d", "n", { spec: { replicas: 1, template: { spec: { containers: [{ name: "c", image: "i:1" }] } } } });
    const live = { ...want, metadata: { ...want.metadata, uid: "u", resourceVersion: "1" }, spec: { replicas: 1, revisionHistoryLimit: 10, template: { spec: { containers: [{ name: "c", image: "i:1", imagePullPolicy: "IfNotPresent" }], dnsPolicy: "ClusterFirst" } } }, status: {} };
    assert.deepEqual(objectDifferences(want, live), []);
    const drifted = { ...live, spec: { ...live.spec, replicas: 3 } };
    assert.deepEqual(objectDifferences(want, drifted), [".spec.replicas: rendered 1, cluster has 3"]);
    const fewer = { ...live, spec: { ...live.spec, template: { spec: { containers: [] } } } };
    assert.deepEqual(objectDifferences(want, fewer), [".spec.template.spec.containers: rendered 1 items, cluster has 0"]);
});

test("differences: zero values the API server drops equal absent ones; others do not", () => {
    assert.deepEqual(differences({ readOnly: false, ingress: [], podSelector: { matchLabels: {} } }, { podSelector: {} }), []);
    assert.deepEqual(differences({ readOnly: true, ingress: [{}] }, {}), [".readOnly: rendered true, cluster has undefined", ".ingress: rendered a list, cluster has undefined"]);
});

test("differences: a Secret's stringData against the decoded data", () => {
    const want = obj("v1", "Secret", "s", "n", { stringData: { k: "v" }, type: "Opaque" });
    assert.deepEqual(objectDifferences(want, obj("v1", "Secret", "s", "n", { data: { k: Buffer.from("v").toString("base64") }, type: "Opaque" })), []);
    assert.deepEqual(objectDifferences(want, obj("v1", "Secret", "s", "n", { data: { k: Buffer.from("w").toString("base64") }, type: "Opaque" })),
        ['.stringData.k: rendered "v", cluster has "w"']);
});

test("the cluster against the render: missing, differing, and the stack's extra objects (not controller-made ones)", () => {
    const label = { "app.kubernetes.io/part-of": "ops" };
    const a = obj("v1", "ConfigMap", "a", "n", { data: { x: "1" } });
    a.metadata!.labels = label;
    const b = obj("v1", "ConfigMap", "b", "n");
    const live: K8sObject[] = [
        { ...a, data: { x: "2" } },
        { ...obj("v1", "ConfigMap", "stray", "n"), metadata: { name: "stray", namespace: "n", labels: label } },
        { ...obj("batch/v1", "Job", "cron-123", "n"), metadata: { name: "cron-123", namespace: "n", labels: label, ownerReferences: [{ kind: "CronJob" }] } },
        { ...obj("v1", "PersistentVolumeClaim", "data-pg-0", "n"), metadata: { name: "data-pg-0", namespace: "n", labels: label } },
        { ...obj("v1", "PersistentVolumeClaim", "data-pgx-0", "n"), metadata: { name: "data-pgx-0", namespace: "n", labels: label } },
    ];
    const sts = obj("apps/v1", "StatefulSet", "pg", "n", { spec: { volumeClaimTemplates: [{ metadata: { name: "data" } }] } });
    live.push({ ...sts, metadata: { ...sts.metadata } });
    assert.deepEqual(compareWithCluster([a, b, sts], live, ["app.kubernetes.io/part-of", "ops"]), {
        missing: ["ConfigMap n/b"],
        differing: ['ConfigMap n/a .data.x: rendered "1", cluster has "2"'],
        extra: ["ConfigMap n/stray", "PersistentVolumeClaim n/data-pgx-0"],
    });
});
