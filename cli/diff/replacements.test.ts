import assert from "node:assert/strict";
import { test } from "node:test";
import { diffObjects } from "./objects";
import { findReplacements } from "./replacements";
import { replacementLines } from "./replacementsMarkdown";

const sts = (storage: string, replicas: number) => ({
    apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "postgres", namespace: "data" },
    spec: {
        replicas, serviceName: "postgres", selector: { matchLabels: { app: "postgres" } },
        template: { spec: { containers: [{ name: "postgres", image: "postgres:15", resources: { limits: { memory: replicas === 1 ? "1Gi" : "2Gi" } } }] } },
        volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage } } } }],
    },
});

test("a StatefulSet's volumeClaimTemplates change is a replacement; replicas and a container limit are updates in place", () => {
    const inPlace = diffObjects([sts("10Gi", 1)], [sts("10Gi", 2)]);
    assert.equal(inPlace.changed.length, 1);
    assert.deepEqual(findReplacements(inPlace.changed), []);
    const replaced = findReplacements(diffObjects([sts("10Gi", 1)], [sts("20Gi", 1)]).changed);
    assert.deepEqual(replaced, [{ apiVersion: "apps/v1", kind: "StatefulSet", namespace: "data", name: "postgres", fields: ["spec.volumeClaimTemplates[0].spec.resources.requests.storage"] }]);
    assert.match(replacementLines(replaced).join("\n"), /\*\*replace\*\* StatefulSet data\/postgres: `spec\.volumeClaimTemplates\[0\]\.spec\.resources\.requests\.storage`/);
});

test("the provider's other force-new fields: Deployment selector, Job template, ConfigMap data, Service clusterIP, Pod container image; not a Deployment's template", () => {
    const cases: Array<[object, object, boolean]> = [
        [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { selector: { matchLabels: { a: "1" } } } }, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { selector: { matchLabels: { a: "2" } } } }, true],
        [{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template: { spec: { containers: [{ name: "c", image: "a" }] } } } }, { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template: { spec: { containers: [{ name: "c", image: "b" }] } } } }, false],
        [{ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { template: { spec: { restartPolicy: "Never" } } } }, { apiVersion: "batch/v1", kind: "Job", metadata: { name: "j" }, spec: { template: { spec: { restartPolicy: "OnFailure" } } } }, true],
        [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { "app.conf": "a" } }, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, data: { "app.conf": "b" } }, true],
        [{ apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", labels: { a: "1" } } }, { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c", labels: { a: "2" } } }, false],
        [{ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { clusterIP: "None" } }, { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { clusterIP: "10.0.0.1" } }, true],
        [{ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [{ name: "p", port: 1 }] } }, { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { ports: [{ name: "p", port: 2 }] } }, false],
        [{ apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "a" }] } }, { apiVersion: "v1", kind: "Pod", metadata: { name: "p" }, spec: { containers: [{ name: "c", image: "b" }] } }, true],
    ];
    for (const [a, b, replace] of cases) {
        const d = diffObjects([a], [b]);
        assert.equal(d.changed.length, 1, JSON.stringify(b));
        assert.equal(findReplacements(d.changed).length > 0, replace, JSON.stringify(b));
    }
});

test("a volume claim template change carries the explain comparison's sentence for its StatefulSet: growth, refusal, or a pointer without one; other replacements none", () => {
    const replaced = findReplacements(diffObjects([sts("10Gi", 1)], [sts("20Gi", 1)]).changed);
    const grow = "data/postgres: volume data 10Gi → 20Gi (config key postgresVolumeSize): each claim (data-postgres-0) is expanded in place";
    const other = "data/redis: volume data 1Gi → 2Gi: each claim (data-redis-0) is expanded in place";
    const text = replacementLines(replaced, 20, [other, grow]).join("\n");
    assert.ok(text.includes(`> **Volume growth of StatefulSet data/postgres.** ${grow}`), text);
    assert.ok(!text.includes("data-redis-0"), "another StatefulSet's sentence is not put under this one");
    const refused = replacementLines(replaced, 20, ["refused: data/postgres: volume data 10Gi → 5Gi: a claim cannot shrink"]).join("\n");
    assert.match(refused, /> \*\*Refused: the volume claim templates of StatefulSet data\/postgres\.\*\* data\/postgres: volume data 10Gi → 5Gi: a claim cannot shrink/);
    assert.match(replacementLines(replaced).join("\n"), /volume claim templates of StatefulSet data\/postgres change\*\*: see "What changes on the cluster"/);
    const job = (restartPolicy: string) => ({ apiVersion: "batch/v1", kind: "Job", metadata: { name: "j", namespace: "n" }, spec: { template: { spec: { restartPolicy } } } });
    assert.doesNotMatch(replacementLines(findReplacements(diffObjects([job("Never")], [job("OnFailure")]).changed), 20, [grow]).join("\n"), /volume/i);
});

test("issue 42: a claim template size written another way but equal (5Gi -> 5368709120) is no replacement: the program keeps the deployed spelling", () => {
    assert.deepEqual(findReplacements(diffObjects([sts("5Gi", 1)], [sts("5368709120", 1)]).changed), []);
    assert.deepEqual(findReplacements(diffObjects([sts("5Gi", 1)], [sts("5Gi", 1)]).changed), []);
    assert.equal(findReplacements(diffObjects([sts("5Gi", 1)], [sts("5368709121", 1)]).changed).length, 1, "one byte more is a growth");
});
