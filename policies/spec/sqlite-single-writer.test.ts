import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf } from "../pack/testing";
import { rule, SQLITE, STORAGE_MARKER } from "./sqlite-single-writer";

function booking(): K8sObject {
    const app = deployment("booking");
    app.metadata!.labels![STORAGE_MARKER] = SQLITE;
    app.spec.replicas = 1;
    app.spec.strategy = { type: "Recreate" };
    return app;
}

const hpaFor = (name: string): K8sObject => ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name, namespace: "apps" },
    spec: { scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name }, minReplicas: 1, maxReplicas: 3 },
});

test("a marked workload with one replica, Recreate and no autoscaler passes; unmarked workloads are not concerned", () => {
    assert.deepEqual(messagesOf(rule, [booking(), deployment("web"), hpaFor("web")]), []);
});

test("two replicas or the rolling update strategy fail (section 2.11: one SQLite writer)", () => {
    const two = booking();
    two.spec.replicas = 2;
    assert.match(messagesOf(rule, [two])[0], /runs 2 replicas/);
    const rolling = booking();
    delete rolling.spec.strategy;
    assert.match(messagesOf(rule, [rolling])[0], /RollingUpdate \(default\) strategy/);
});

test("an autoscaler on a marked workload fails; the marker may be an annotation", () => {
    const annotated = booking();
    delete annotated.metadata!.labels![STORAGE_MARKER];
    annotated.metadata!.annotations = { [STORAGE_MARKER]: SQLITE };
    assert.match(messagesOf(rule, [annotated, hpaFor("booking")])[0], /autoscales Deployment apps\/booking/);
});
