import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { deployment, messagesOf } from "../pack/testing";
import { rule } from "./gateway-max-recharge";

function stack(value: unknown = "10000"): K8sObject[] {
    const config: K8sObject = {
        apiVersion: "v1",
        kind: "ConfigMap",
        metadata: { name: "agent-server-config", namespace: "agent" },
        data: { "config.json": JSON.stringify({ mcp: { "gateway-admin": { type: "local", environment: { SUB2API_MAX_RECHARGE: value, SUB2API_TIMEOUT_MS: "30000" } } } }) },
    };
    const app = deployment("agent");
    app.spec.template.spec.containers[0].env = [{ name: "SUB2API_MAX_RECHARGE", value: "500" }];
    return [config, app];
}

test("10000 (section 8.2) in the configuration file and a smaller env value pass", () => {
    assert.deepEqual(messagesOf(rule, stack()), []);
});

test("above 10000 in the configuration file fails", () => {
    const messages = messagesOf(rule, stack("10001"));
    assert.equal(messages.length, 1);
    assert.match(messages[0], /config\.json\.mcp\.gateway-admin\.environment\.SUB2API_MAX_RECHARGE: SUB2API_MAX_RECHARGE is 10001, above the limit of 10000/);
});

test("above the limit in a container env, or not a positive integer, fails", () => {
    const [config, app] = stack();
    app.spec.template.spec.containers[0].env[0].value = "50000";
    assert.match(messagesOf(rule, [config, app])[0], /container main: SUB2API_MAX_RECHARGE is 50000/);
    app.spec.template.spec.containers[0].env[0].value = "1e9";
    assert.match(messagesOf(rule, [config, app])[0], /not a positive integer/);
});
