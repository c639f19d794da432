import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./block-endpoint-edit-default-role";

const MESSAGE = /^ClusterRole system:aggregate-to-edit should not allow endpoint edit permissions/;

function validRole(): K8sObject {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRole",
        metadata: { name: "system:aggregate-to-edit" },
        rules: [
            { apiGroups: [""], resources: ["endpoints", "pods"], verbs: ["get", "list", "watch"] },
            { apiGroups: [""], resources: ["configmaps"], verbs: ["create", "update", "patch"] },
        ],
    };
}

test("read-only access to endpoints passes", () => {
    assert.deepEqual(checkTemplate(rule, validRole()), []);
});

for (const verb of ["create", "patch", "update", "*"]) {
    test(`the ${verb} verb on endpoints is refused, once per role`, () => {
        const role = validRole();
        role.rules.push({ apiGroups: [""], resources: ["endpoints"], verbs: [verb] });
        role.rules.push({ apiGroups: ["apps"], resources: ["endpoints"], verbs: [verb] });
        const messages = checkTemplate(rule, role);
        assert.equal(messages.length, 1);
        assert.match(messages[0], MESSAGE);
    });
}

test("other roles may edit endpoints", () => {
    const role = validRole();
    role.metadata!.name = "custom-editor";
    role.rules.push({ apiGroups: [""], resources: ["endpoints"], verbs: ["create"] });
    assert.deepEqual(checkTemplate(rule, role), []);
});
