import assert from "node:assert/strict";
import { test } from "node:test";
import { checkTemplate } from "../engine/test-support";
import type { K8sObject } from "../types";
import { rule } from "./disallowanonymous";

function validBinding(): K8sObject {
    return {
        apiVersion: "rbac.authorization.k8s.io/v1",
        kind: "ClusterRoleBinding",
        metadata: { name: "viewers" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
        subjects: [
            { kind: "Group", name: "system:authenticated", apiGroup: "rbac.authorization.k8s.io" },
            { kind: "User", name: "alice", apiGroup: "rbac.authorization.k8s.io" },
        ],
    };
}

test("bindings to authenticated users pass", () => {
    assert.deepEqual(checkTemplate(rule, validBinding()), []);
});

test("binding system:unauthenticated or system:anonymous is refused, per subject", () => {
    const binding = validBinding();
    binding.subjects.push({ kind: "Group", name: "system:unauthenticated" }, { kind: "User", name: "system:anonymous" });
    assert.deepEqual(checkTemplate(rule, binding), [
        "system:unauthenticated is not allowed as a subject name in ClusterRoleBinding viewers",
        "system:anonymous is not allowed as a subject name in ClusterRoleBinding viewers",
    ]);
});

test("roles in allowedRoles may be bound to anyone", () => {
    const binding = validBinding();
    binding.subjects.push({ kind: "User", name: "system:anonymous" });
    assert.deepEqual(checkTemplate(rule, binding, { allowedRoles: ["view"] }), []);
});

test("disallowAuthenticated also refuses system:authenticated", () => {
    assert.deepEqual(checkTemplate(rule, validBinding(), { disallowAuthenticated: true }), [
        "system:authenticated is not allowed as a subject name in ClusterRoleBinding viewers",
    ]);
});
