import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./seccompv2";

const PARAMS: Params = { allowedProfiles: ["RuntimeDefault", "Localhost"], allowedLocalhostFiles: ["profile.json"] };
// The library prints its get_allowed_profiles set of objects, not the parameter list.
const ALLOWED_TEXT = '{{"localHostProfile": "profile.json", "type": "Localhost"}, {"type": "RuntimeDefault"}}';

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { securityContext: { seccompProfile: { type: "RuntimeDefault" } }, containers: [{ name: "nginx", image: "nginx" }] },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("an allowed pod-level profile passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a disallowed pod-level profile is reported with the type as written", () => {
    const pod = validPod();
    pod.spec.securityContext.seccompProfile.type = "Unconfined";
    assert.deepEqual(check(pod), [
        `Seccomp profile 'Unconfined' is not allowed for container 'nginx'. Found at: pod securityContext. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
});

test("the container profile wins over the pod profile", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { seccompProfile: { type: "Unconfined" } };
    assert.deepEqual(check(pod), [
        `Seccomp profile 'Unconfined' is not allowed for container 'nginx'. Found at: container securityContext. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
});

test("Localhost is allowed for listed files or with the * file wildcard", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { seccompProfile: { type: "Localhost", localhostProfile: "profile.json" } };
    assert.deepEqual(check(pod), []);
    pod.spec.containers[0].securityContext.seccompProfile.localhostProfile = "other.json";
    assert.deepEqual(check(pod), [
        `Seccomp profile 'Localhost' with file 'other.json' is not allowed for container 'nginx'. Found at: container securityContext. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
    assert.deepEqual(check(pod, { ...PARAMS, allowedLocalhostFiles: ["*"] }), []);
});

test("annotations are ignored: no securityContext profile is 'not configured'", () => {
    const pod = validPod();
    delete pod.spec.securityContext;
    pod.metadata!.annotations = { "seccomp.security.alpha.kubernetes.io/pod": "runtime/default" };
    pod.spec.ephemeralContainers = [{ name: "debug", image: "busybox" }];
    assert.deepEqual(check(pod), [
        `Seccomp profile 'not configured' is not allowed for container 'nginx'. Found at: no explicit profile found. Allowed profiles: ${ALLOWED_TEXT}`,
        `Seccomp profile 'not configured' is not allowed for container 'debug'. Found at: no explicit profile found. Allowed profiles: ${ALLOWED_TEXT}`,
    ]);
    assert.deepEqual(check(pod, { allowedProfiles: ["not configured"] }), []);
});

test("* allows everything and exemptImages exempts matching containers", () => {
    const pod = validPod();
    pod.spec.securityContext.seccompProfile.type = "Unconfined";
    assert.deepEqual(check(pod, { allowedProfiles: ["*"] }), []);
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["ngin*"] }), []);
});

// Defaults, as the library's Rego: allowedLocalhostFiles defaults to [""], so a Localhost profile
// without localhostProfile is allowed when "Localhost" is; an allowedLocalhostFiles "*" allows any
// Localhost profile even when allowedProfiles does not list Localhost.
test("allowedLocalhostFiles defaults to [\"\"] and its * allows Localhost on its own", () => {
    const pod = validPod();
    pod.spec.securityContext.seccompProfile = { type: "Localhost" };
    assert.deepEqual(check(pod, { allowedProfiles: ["Localhost"] }), []);
    pod.spec.securityContext.seccompProfile = { type: "Localhost", localhostProfile: "x.json" };
    assert.deepEqual(check(pod, { allowedProfiles: ["Localhost"] }), [
        `Seccomp profile 'Localhost' with file 'x.json' is not allowed for container 'nginx'. Found at: pod securityContext. Allowed profiles: {{"localHostProfile": "", "type": "Localhost"}}`,
    ]);
    assert.deepEqual(check(pod, { allowedProfiles: ["RuntimeDefault"], allowedLocalhostFiles: ["*"] }), []);
    const unconfined = validPod();
    unconfined.spec.securityContext.seccompProfile = { type: "Unconfined" };
    assert.deepEqual(check(unconfined, {}), ["Seccomp profile 'Unconfined' is not allowed for container 'nginx'. Found at: pod securityContext. Allowed profiles: set()"]);
});
