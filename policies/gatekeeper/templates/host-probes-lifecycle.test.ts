import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./host-probes-lifecycle";

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: {
            containers: [
                {
                    name: "nginx",
                    image: "nginx",
                    livenessProbe: { httpGet: { path: "/", port: 80 } },
                    readinessProbe: { tcpSocket: { port: 80, host: "" } },
                    lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } },
                },
            ],
        },
    };
}

function check(pod: K8sObject, parameters: Params = {}): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("probes and hooks without a host (or with an empty one) pass", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a probe host is reported with the container and the host", () => {
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
        const pod = validPod();
        pod.spec.containers[0][probe] = { httpGet: { path: "/", port: 80, host: "10.0.0.1" } };
        assert.deepEqual(check(pod), ["Container nginx has probe with host field set: 10.0.0.1"], probe);
    }
    const tcp = validPod();
    tcp.spec.containers[0].readinessProbe.tcpSocket.host = "node.local";
    assert.deepEqual(check(tcp), ["Container nginx has probe with host field set: node.local"]);
});

test("a lifecycle hook host is reported, in any container kind", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox", lifecycle: { postStart: { httpGet: { port: 80, host: "127.0.0.1" } } } }];
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox", lifecycle: { preStop: { tcpSocket: { port: 80, host: "127.0.0.1" } } } }];
    assert.deepEqual(check(pod), [
        "Container init has lifecycle hook with host field set: 127.0.0.1",
        "Container debug has lifecycle hook with host field set: 127.0.0.1",
    ]);
});

test("the same message from two probes is one violation", () => {
    const pod = validPod();
    pod.spec.containers[0].livenessProbe.httpGet.host = "127.0.0.1";
    pod.spec.containers[0].startupProbe = { httpGet: { port: 80, host: "127.0.0.1" } };
    assert.deepEqual(check(pod), ["Container nginx has probe with host field set: 127.0.0.1"]);
});

test("exemptImages skips matching containers", () => {
    const pod = validPod();
    pod.spec.containers[0].livenessProbe.httpGet.host = "127.0.0.1";
    assert.deepEqual(check(pod, { exemptImages: ["nginx"] }), []);
});
