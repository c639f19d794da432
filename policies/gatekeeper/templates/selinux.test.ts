import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../types";
import { type Params, rule } from "./selinux";

const PARAMS: Params = { allowedSELinuxOptions: [{ type: "container_t" }, { level: "s0:c123,c456", role: "object_r", type: "svirt_sandbox_file_t", user: "system_u" }] };
const ALLOWED_TEXT =
    '[{"type": "container_t"}, {"level": "s0:c123,c456", "role": "object_r", "type": "svirt_sandbox_file_t", "user": "system_u"}]';

function validPod(): K8sObject {
    return {
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "web" },
        spec: { containers: [{ name: "nginx", image: "nginx", securityContext: { seLinuxOptions: { type: "container_t" } } }] },
    };
}

function check(pod: K8sObject, parameters: Params = PARAMS): string[] {
    const review = { object: pod, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE" as const };
    return rule.validate({ review, parameters, inventory: { list: () => [] } }).map((v) => v.msg);
}

test("options matching an allowed entry pass; no options pass", () => {
    const pod = validPod();
    pod.spec.initContainers = [{ name: "init", image: "busybox" }];
    assert.deepEqual(check(pod), []);
});

test("a field the allowed entry does not set is not allowed", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext.seLinuxOptions.user = "sysadm_u";
    assert.deepEqual(check(pod), [`SELinux options is not allowed, pod: web, container: nginx. Allowed options: ${ALLOWED_TEXT}`]);
});

test("pod-level options are checked on their own", () => {
    const pod = validPod();
    pod.spec.securityContext = { seLinuxOptions: { type: "spc_t" } };
    assert.deepEqual(check(pod), [`SELinux options is not allowed, pod: web. Allowed options: ${ALLOWED_TEXT}`]);
    pod.spec.securityContext.seLinuxOptions = { level: "s0:c123,c456", role: "object_r", type: "svirt_sandbox_file_t", user: "system_u" };
    assert.deepEqual(check(pod), []);
});

test("ephemeral containers are checked and exemptImages skips containers", () => {
    const pod = validPod();
    pod.spec.ephemeralContainers = [{ name: "debug", image: "tools.io/debug", securityContext: { seLinuxOptions: { type: "spc_t" } } }];
    assert.deepEqual(check(pod), [`SELinux options is not allowed, pod: web, container: debug. Allowed options: ${ALLOWED_TEXT}`]);
    assert.deepEqual(check(pod, { ...PARAMS, exemptImages: ["tools.io/*"] }), []);
});

// Messages, as the library's Rego: the container message reads "container: <name>", and a
// container without a name has no message, so no violation.
test("the container message names the container after 'container:'; a nameless container is not reported", () => {
    const pod = validPod();
    pod.spec.containers[0].securityContext = { seLinuxOptions: { type: "spc_t" } };
    assert.match(check(pod)[0], /, container: nginx\. Allowed options: /);
    delete pod.spec.containers[0].name;
    assert.deepEqual(check(pod), []);
});
