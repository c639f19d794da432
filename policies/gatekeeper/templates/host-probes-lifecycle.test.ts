import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { type Params, rule } from "./host-probes-lifecycle";

// One probe and one hook per container: the library's Rego fails on two different ones (below).
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
                    readinessProbe: { tcpSocket: { port: 80, host: "" } },
                    lifecycle: { preStop: { exec: { command: ["sleep", "5"] } } },
                },
            ],
        },
    };
}

const check = (pod: K8sObject, parameters: Params = {}) => checkTemplate(rule, pod, parameters as Record<string, unknown>);
const conflict = (line: number) => `template:${line}: eval_conflict_error: functions must not produce multiple outputs for same inputs`;

test("probes and hooks without a host (or with an empty one) pass", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a probe host is reported with the container and the host", () => {
    for (const probe of ["livenessProbe", "readinessProbe", "startupProbe"]) {
        const pod = validPod();
        delete pod.spec.containers[0].readinessProbe;
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

test("the same probe twice is one value for the Rego, and its message one violation", () => {
    const pod = validPod();
    pod.spec.containers[0].readinessProbe = { httpGet: { port: 80, host: "127.0.0.1" } };
    pod.spec.containers[0].startupProbe = { httpGet: { port: 80, host: "127.0.0.1" } };
    assert.deepEqual(check(pod), ["Container nginx has probe with host field set: 127.0.0.1"]);
});

// Issue 21, checked with gator v3.23.1: get_probe/get_lifecycle_hook have one definition per
// probe or hook; two different values are OPA's eval_conflict_error at the definition of the
// second, and Gatekeeper reports the error text as the violation.
test("two different probes of a container: Gatekeeper's evaluation error at the second probe's definition", () => {
    const pod = validPod();
    pod.spec.containers[0].livenessProbe = { httpGet: { path: "/", port: 80 } };
    assert.deepEqual(check(pod), [conflict(50)]);
    const startup = validPod();
    startup.spec.containers[0].startupProbe = { exec: { command: ["true"] } };
    assert.deepEqual(check(startup), [conflict(54)]);
    // liveness equal to readiness, startup different: the conflict is at startupProbe.
    const three = validPod();
    three.spec.containers[0].livenessProbe = structuredClone(three.spec.containers[0].readinessProbe);
    three.spec.containers[0].startupProbe = { exec: { command: ["true"] } };
    assert.deepEqual(check(three), [conflict(54)]);
    // null is a value too (the decoded object, without it, passes).
    const withNull = validPod();
    withNull.spec.containers[0].startupProbe = null;
    assert.deepEqual(check(withNull), [conflict(54)]);
});

test("the error replaces the template's other violations; the first container in Rego's set order decides the line", () => {
    const pod = validPod();
    pod.spec.containers[0].readinessProbe.tcpSocket.host = "node.local";
    pod.spec.containers.push({ name: "b", image: "a", livenessProbe: { exec: { command: ["x"] } }, readinessProbe: { exec: { command: ["y"] } } });
    pod.spec.containers.push({ name: "c", image: "b", livenessProbe: { exec: { command: ["x"] } }, startupProbe: { exec: { command: ["y"] } } });
    // Containers sort by their keys' values: image "a" before "b" before "nginx".
    assert.deepEqual(check(pod), [conflict(50)]);
    pod.spec.containers[1].image = "z";
    assert.deepEqual(check(pod), [conflict(54)]);
});

test("two different lifecycle hooks: the error at preStop, after the probe rules", () => {
    const pod = validPod();
    pod.spec.containers[0].lifecycle.postStart = { exec: { command: ["true"] } };
    pod.spec.containers.push({ name: "b", image: "b", livenessProbe: { httpGet: { port: 1, host: "h" } } });
    assert.deepEqual(check(pod), [conflict(62)]);
    pod.spec.containers[0].lifecycle.postStart = structuredClone(pod.spec.containers[0].lifecycle.preStop);
    assert.deepEqual(check(pod), ["Container b has probe with host field set: h"]);
});

test("exemptImages skips matching containers, their probes included", () => {
    const pod = validPod();
    pod.spec.containers[0].readinessProbe.tcpSocket.host = "127.0.0.1";
    pod.spec.containers[0].livenessProbe = { exec: { command: ["true"] } };
    assert.deepEqual(check(pod, { exemptImages: ["nginx"] }), []);
});
