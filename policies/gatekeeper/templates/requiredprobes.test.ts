import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./requiredprobes";

const PARAMS = { probes: ["readinessProbe", "livenessProbe"], probeTypes: ["tcpSocket", "httpGet", "exec"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            initContainers: [{ name: "init", image: "busybox" }],
            containers: [
                {
                    name: "app",
                    image: "nginx",
                    readinessProbe: { httpGet: { path: "/ready", port: 80 } },
                    livenessProbe: { tcpSocket: { port: 80 } },
                },
            ],
        },
    };
}

test("containers with both probes pass; init containers need none", () => {
    assert.deepEqual(checkTemplate(rule, validPod(), PARAMS), []);
});

test("a missing probe is refused", () => {
    const pod = validPod();
    delete pod.spec.containers[0].livenessProbe;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["Container <app> in your <Pod> <web> has no <livenessProbe>"]);
});

test("a probe without one of the accepted probe types counts as missing", () => {
    const pod = validPod();
    pod.spec.containers[0].readinessProbe = { grpc: { port: 9000 }, periodSeconds: 5 };
    pod.spec.containers[0].livenessProbe = null;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), [
        "Container <app> in your <Pod> <web> has no <readinessProbe>",
        "Container <app> in your <Pod> <web> has no <livenessProbe>",
    ]);
});

// Null and absence, as the library's Rego: a probe set to null has no probe type, so it is missing;
// a probe type present with null counts as set; no probeTypes makes every probe missing; a Pod
// without metadata.name cannot be named in the message, so it is not reported.
test("null probes are missing, null probe types are set, no probeTypes misses everything, nameless Pods are not reported", () => {
    const pod = validPod();
    pod.spec.containers[0].readinessProbe = null;
    pod.spec.containers[0].livenessProbe = { tcpSocket: null };
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), ["Container <app> in your <Pod> <web> has no <readinessProbe>"]);
    assert.equal(checkTemplate(rule, validPod(), { probes: ["readinessProbe"] }).length, 1);
    delete pod.metadata!.name;
    assert.deepEqual(checkTemplate(rule, pod, PARAMS), []);
});
