import assert from "node:assert/strict";
import { test } from "node:test";
import type { K8sObject } from "../gatekeeper/types";
import { messagesOf } from "../pack/testing";
import { rule } from "./agent-gateway-tools-denied";

// Section 5.3: global deny; the maintainer allows six read-only tools and asks before three mutating ones.
function agentConfig(): any {
    return {
        permission: { "gateway-admin_*": "deny" },
        agent: {
            build: { options: { store: false } },
            maintainer: {
                permission: {
                    "gateway-admin_*": "deny",
                    "gateway-admin_describe": "allow",
                    "gateway-admin_health": "allow",
                    "gateway-admin_read": "allow",
                    "gateway-admin_find_user": "allow",
                    "gateway-admin_preview_recharge": "allow",
                    "gateway-admin_model_control_options": "allow",
                    "gateway-admin_recharge": "ask",
                    "gateway-admin_update_user_limits": "ask",
                    "gateway-admin_set_account_schedulable": "ask",
                },
            },
        },
    };
}

const configMap = (file: unknown): K8sObject => ({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: "agent-server-config", namespace: "agent" },
    data: { "config.json": typeof file === "string" ? file : JSON.stringify(file) },
});

test("the permissions of section 5.3 pass", () => {
    assert.deepEqual(messagesOf(rule, [configMap(agentConfig())]), []);
});

test("a global default other than deny fails", () => {
    const file = agentConfig();
    file.permission["gateway-admin_*"] = "ask";
    assert.match(messagesOf(rule, [configMap(file)])[0], /global default must be "deny"/);
    delete file.permission;
    assert.equal(messagesOf(rule, [configMap(file)]).length, 1);
});

test("another agent allowing a gateway tool fails; the maintainer may not allow recharge without asking", () => {
    const file = agentConfig();
    file.agent.build.permission = { "gateway-admin_read": "allow" };
    file.agent.maintainer.permission["gateway-admin_recharge"] = "allow";
    const messages = messagesOf(rule, [configMap(file)]);
    assert.equal(messages.length, 2);
    assert.match(messages[0], /agent build sets gateway-admin_read/);
    assert.match(messages[1], /allows gateway-admin_recharge without asking/);
});

test("a configuration that is not JSON fails; a stack without the ConfigMap is not concerned", () => {
    assert.match(messagesOf(rule, [configMap("{not json")])[0], /not JSON/);
    assert.deepEqual(messagesOf(rule, []), []);
});
