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
