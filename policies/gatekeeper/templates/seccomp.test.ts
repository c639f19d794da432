import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./seccomp";

const PARAMS: Params = { allowedProfiles: ["runtime/default", "Localhost"], allowedLocalhostFiles: ["profile.json"] };
const ALLOWED_TEXT = '{"Localhost", "localhost/profile.json", "runtime/default"}';

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", annotations: { "seccomp.security.alpha.kubernetes.io/pod": "runtime/default" } },
        spec: { containers: [{ name: "nginx", image: "nginx" }] },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("an allowed pod annotation passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a disallowed container annotation wins over the pod annotation", () => {
    const pod = validPod();
    pod.metadata!.annotations!["container.seccomp.security.alpha.kubernetes.io/nginx"] = "unconfined";
    assert.deepEqual(check(pod), [
        `Seccomp profile 'unconfined' is not allowed for container 'nginx'. Found at: annotation container.seccomp.security.alpha.kubernetes.io/nginx. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
});

test("securityContext profiles win over annotations and are translated to annotation names", () => {
    const pod = validPod();
    pod.spec.securityContext = { seccompProfile: { type: "Unconfined" } };
    assert.deepEqual(check(pod), [
        `Seccomp profile 'unconfined' is not allowed for container 'nginx'. Found at: pod securityContext. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
    pod.spec.containers[0].securityContext = { seccompProfile: { type: "RuntimeDefault" } };
    assert.deepEqual(check(pod), []);
});

test("Localhost profiles are allowed per file, or all with localhost/*", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { seccompProfile: { type: "Localhost", localhostProfile: "profile.json" } };
    assert.deepEqual(check(pod), []);
    pod.spec.containers[0].securityContext.seccompProfile.localhostProfile = "other.json";
    assert.deepEqual(check(pod), [
        `Seccomp profile 'localhost/other.json' is not allowed for container 'nginx'. Found at: container securityContext. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
    assert.deepEqual(check(pod, { allowedProfiles: ["localhost/*"] }), []);
});

// Parameter absence, as the library's Rego: a type name (RuntimeDefault) is translated into
// annotation names once per allowedLocalhostFiles entry, so without that parameter it stays as
// written and allows no annotation or securityContext profile.
test("RuntimeDefault allows docker/default only with allowedLocalhostFiles; * allows everything", () => {
    const pod = validPod();
    pod.metadata!.annotations!["seccomp.security.alpha.kubernetes.io/pod"] = "docker/default";
    assert.deepEqual(check(pod, { allowedProfiles: ["RuntimeDefault"], allowedLocalhostFiles: ["any.json"] }), []);
    assert.deepEqual(check(pod, { allowedProfiles: ["RuntimeDefault"] }), [
        `Seccomp profile 'docker/default' is not allowed for container 'nginx'. Found at: annotation seccomp.security.alpha.kubernetes.io/pod. Allowed profiles: {"RuntimeDefault"}`,
    ]);
    pod.metadata!.annotations!["seccomp.security.alpha.kubernetes.io/pod"] = "unconfined";
    assert.deepEqual(check(pod, { allowedProfiles: ["*"] }), []);
});

test("no profile at all is 'not configured', for every container kind", () => {
    const pod = validPod();
    delete pod.metadata!.annotations;
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox" }];
    const messages = check(pod);
    assert.equal(messages.length, 2);
    assert.match(messages[1], /^Seccomp profile 'not configured' is not allowed for container 'debug'\. Found at: no explicit profile found\./);
    assert.deepEqual(check(pod, { allowedProfiles: ["not configured"] }), []);
});

test("exemptImages exempts matching containers", () => {
    const pod = validPod();
    pod.metadata!.annotations!["seccomp.security.alpha.kubernetes.io/pod"] = "unconfined";
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["nginx"] }), []);
});

// Defaults, as the Rego's canonicalize_runtime_default_profile: a RuntimeDefault securityContext
// reads as docker/default when only docker/default is allowed.
test("a RuntimeDefault securityContext is docker/default when only docker/default is allowed", () => {
    const pod = validPod();
    delete pod.metadata!.annotations;
    pod.spec.securityContext = { seccompProfile: { type: "RuntimeDefault" } };
    assert.deepEqual(check(pod, { allowedProfiles: ["docker/default"] }), []);
    assert.deepEqual(check(pod, { allowedProfiles: ["unconfined"] }), [
        `Seccomp profile 'runtime/default' is not allowed for container 'nginx'. Found at: pod securityContext. Allowed profiles: {"unconfined"}`,
    ]);
});
