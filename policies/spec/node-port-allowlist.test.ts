import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf, service } from "../pack/testing";
import { rule } from "./node-port-allowlist";

// Section 8.2: the GitOps server's node port is 30443, the column store's 30900 and 31567.
const allowlist = { allowedNodePorts: [30443, 30900, 31567] };

function nodePortService(nodePort: number | undefined): K8sObject {
    const svc = service("gitops-server");
    svc.spec.type = "NodePort";
    svc.spec.ports = [{ name: "https", port: 443, targetPort: 8080, nodePort }];
    return svc;
}

test("a node port from the allowlist passes; ClusterIP Services are not concerned", () => {
    assert.deepEqual(messagesOf(rule, [nodePortService(30443), service("web")], allowlist), []);
});

test("a node port outside the allowlist fails", () => {
    assert.match(messagesOf(rule, [nodePortService(32000)], allowlist)[0], /node port 32000, which is not in the allowlist/);
});

test("an unset node port (a random one) fails, and so does any node port with the default empty allowlist", () => {
    assert.match(messagesOf(rule, [nodePortService(undefined)], allowlist)[0], /random node port/);
    assert.equal(messagesOf(rule, [nodePortService(30443)]).length, 1);
});

test("LoadBalancer Services open node ports too", () => {
    const lb = nodePortService(31000);
    lb.spec.type = "LoadBalancer";
    assert.equal(messagesOf(rule, [lb], allowlist).length, 1);
});
