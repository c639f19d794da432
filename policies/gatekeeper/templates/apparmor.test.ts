import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./apparmor";

const PARAMS: Params = { allowedProfiles: ["runtime/default", "localhost/custom"] };

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web", annotations: { "container.apparmor.security.beta.kubernetes.io/nginx": "runtime/default" } },
        spec: { containers: [{ name: "nginx", image: "nginx" }] },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

const DENIED_NGINX =
    'AppArmor profile is not allowed, pod: web, container: nginx. Allowed profiles: ["runtime/default", "localhost/custom"]';

test("an allowed annotation passes", () => {
    assert.deepEqual(check(validPod()), []);
});

test("a disallowed annotation is reported with pod, container and the allowed list", () => {
    const pod = validPod();
    pod.metadata!.annotations!["container.apparmor.security.beta.kubernetes.io/nginx"] = "unconfined";
    assert.deepEqual(check(pod), [DENIED_NGINX]);
});

test("no profile anywhere means runtime/default", () => {
    const pod = validPod();
    delete pod.metadata!.annotations;
    assert.deepEqual(check(pod), []);
    assert.deepEqual(check(pod, { allowedProfiles: ["unconfined"] }), [
        'AppArmor profile is not allowed, pod: web, container: nginx. Allowed profiles: ["unconfined"]',
    ]);
});

test("the container field wins over the annotation and the pod field", () => {
    const pod = validPod();
    pod.spec.securityContext = { appArmorProfile: { type: "Unconfined" } };
    pod.spec.containers[0].securityContext = { appArmorProfile: { type: "Localhost", localhostProfile: "custom" } };
    pod.metadata!.annotations!["container.apparmor.security.beta.kubernetes.io/nginx"] = "unconfined";
    assert.deepEqual(check(pod), []);
    pod.spec.containers[0].securityContext.appArmorProfile = { type: "Unconfined" };
    assert.deepEqual(check(pod), [DENIED_NGINX]);
});

test("the pod field applies to containers without field or annotation", () => {
    const pod = validPod();
    delete pod.metadata!.annotations;
    pod.spec.securityContext = { appArmorProfile: { type: "Unconfined" } };
    pod.spec.initContainers = [{ name: "init", image: "busybox", securityContext: { appArmorProfile: { type: "RuntimeDefault" } } }];
    assert.deepEqual(check(pod), [DENIED_NGINX]);
});

test("ephemeral containers are checked and exemptImages skips matching images", () => {
    const pod = validPod();
    pod.spec.ephemeralContainers = [{ name: "debug", image: "tools.io/debug:1", securityContext: { appArmorProfile: { type: "Unconfined" } } }];
    assert.equal(check(pod).length, 1);
    assert.match(check(pod)[0], /container: debug\./);
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["tools.io/*"] }), []);
});
