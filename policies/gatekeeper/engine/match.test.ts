import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { missingNamespace } from "./match";

const MISSING_NAMESPACE = missingNamespace("elsewhere");
import { matched, obj } from "./test-support";

const pod = (name: string, namespace?: string, labels?: Record<string, string>) => obj("v1", "Pod", name, namespace, labels);
const deployment = (name: string, namespace?: string) => obj("apps/v1", "Deployment", name, namespace);

describe("kinds", () => {
    const objects = [pod("p", "a"), deployment("d", "a"), obj("extensions/v1beta1", "Deployment", "old", "a")];

    test("apiGroups and kinds must both match", () => {
        assert.deepEqual(matched({ kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] }, objects), ["Deployment a/d"]);
        assert.deepEqual(matched({ kinds: [{ apiGroups: [""], kinds: ["Deployment"] }] }, objects), []);
    });

    test("the core group is the empty string", () => {
        assert.deepEqual(matched({ kinds: [{ apiGroups: [""], kinds: ["Pod"] }] }, objects), ["Pod a/p"]);
    });

    test('"*" matches any kind or any group', () => {
        assert.deepEqual(matched({ kinds: [{ apiGroups: ["*"], kinds: ["Deployment"] }] }, objects), [
            "Deployment a/d",
            "Deployment a/old",
        ]);
        assert.equal(matched({ kinds: [{ apiGroups: ["apps"], kinds: ["*"] }] }, objects).length, 1);
        assert.equal(matched({ kinds: [{ apiGroups: ["*"], kinds: ["*"] }] }, objects).length, 3);
    });

    test("no kinds, or an empty list, matches everything", () => {
        assert.equal(matched({}, objects).length, 3);
        assert.equal(matched({ kinds: [] }, objects).length, 3);
    });

    test("any entry of the list may match", () => {
        const match = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }, { apiGroups: ["apps"], kinds: ["Deployment"] }] };
        assert.deepEqual(matched(match, objects), ["Pod a/p", "Deployment a/d"]);
    });
});

describe("namespaces and excludedNamespaces", () => {
    const objects = [pod("p1", "default"), pod("p2"), pod("p3", "kube-system"), pod("p4", "gatekeeper-system"), pod("p5", "team-a")];

    test("namespaces selects listed namespaces only", () => {
        assert.deepEqual(matched({ namespaces: ["team-a"] }, objects), ["Pod team-a/p5"]);
    });

    test("an object without a namespace counts as in default", () => {
        assert.deepEqual(matched({ namespaces: ["default"] }, objects), ["Pod default/p1", "Pod default/p2"]);
        assert.deepEqual(matched({ excludedNamespaces: ["default"] }, objects).length, 3);
    });

    test("a trailing * is a prefix glob, a leading * a suffix glob", () => {
        assert.deepEqual(matched({ namespaces: ["kube-*"] }, objects), ["Pod kube-system/p3"]);
        assert.deepEqual(matched({ namespaces: ["*-system"] }, objects), ["Pod kube-system/p3", "Pod gatekeeper-system/p4"]);
        assert.deepEqual(matched({ excludedNamespaces: ["*-system", "default"] }, objects), ["Pod team-a/p5"]);
    });

    test("a Namespace is matched by its own name", () => {
        const namespaces = [obj("v1", "Namespace", "team-a"), obj("v1", "Namespace", "team-b")];
        assert.deepEqual(matched({ namespaces: ["team-a"] }, namespaces), ["Namespace -/team-a"]);
        assert.deepEqual(matched({ excludedNamespaces: ["team-a"] }, namespaces), ["Namespace -/team-b"]);
    });

    test("cluster-scoped objects are neither selected out nor excluded by namespace lists", () => {
        const role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r");
        assert.deepEqual(matched({ namespaces: ["team-a"] }, [role]), ["ClusterRole -/r"]);
        assert.deepEqual(matched({ excludedNamespaces: ["*"] }, [role]), ["ClusterRole -/r"]);
    });
});

describe("labelSelector", () => {
    const objects = [pod("a", "n", { app: "web", tier: "front" }), pod("b", "n", { app: "db" }), pod("c", "n")];
    const names = (match: object) => matched(match, objects).map((m) => m.split("/")[1]);

    test("matchLabels needs every label with its value", () => {
        assert.deepEqual(names({ labelSelector: { matchLabels: { app: "web", tier: "front" } } }), ["a"]);
        assert.deepEqual(names({ labelSelector: { matchLabels: { app: "web", tier: "back" } } }), []);
    });

    test("matchExpressions In, NotIn, Exists, DoesNotExist", () => {
        const expr = (operator: string, values?: string[]) => ({
            labelSelector: { matchExpressions: [{ key: "app", operator, values }] },
        });
        assert.deepEqual(names(expr("In", ["web", "db"])), ["a", "b"]);
        assert.deepEqual(names(expr("NotIn", ["web"])), ["b", "c"]);
        assert.deepEqual(names(expr("Exists")), ["a", "b"]);
        assert.deepEqual(names(expr("DoesNotExist")), ["c"]);
    });

    test("metadata.labels: null is no labels (issue 21: the match threw)", () => {
        const nullLabels = pod("d", "n");
        nullLabels.metadata = { ...nullLabels.metadata, labels: null as never };
        const only = (match: object) => matched(match, [nullLabels]).map((m) => m.split("/")[1]);
        const expr = (operator: string, values?: string[]) => ({ labelSelector: { matchExpressions: [{ key: "app", operator, values }] } });
        assert.deepEqual(only(expr("DoesNotExist")), ["d"]);
        assert.deepEqual(only(expr("NotIn", ["web"])), ["d"]);
        assert.deepEqual(only(expr("Exists")), []);
        assert.deepEqual(only({ labelSelector: { matchLabels: { app: "web" } } }), []);
    });

    test("matchLabels and matchExpressions are ANDed", () => {
        const match = {
            labelSelector: { matchLabels: { app: "web" }, matchExpressions: [{ key: "tier", operator: "In", values: ["back"] }] },
        };
        assert.deepEqual(names(match), []);
    });

    test("an invalid selector is an error naming the constraint", () => {
        assert.throws(
            () => matched({ labelSelector: { matchExpressions: [{ key: "app", operator: "Equals", values: ["x"] }] } } as never, objects),
            /constraint TestProbe\/probe: spec.match.labelSelector.matchExpressions\[0\]: unknown operator "Equals"/,
        );
        assert.throws(
            () => matched({ labelSelector: { matchExpressions: [{ key: "app", operator: "In" }] } }, objects),
            /operator In needs at least one value/,
        );
    });
});

describe("namespaceSelector", () => {
    const stack = [
        obj("v1", "Namespace", "prod", undefined, { env: "prod" }),
        obj("v1", "Namespace", "dev", undefined, { env: "dev" }),
        pod("in-prod", "prod"),
        pod("in-dev", "dev"),
        pod("elsewhere", "unknown"),
        obj("rbac.authorization.k8s.io/v1", "ClusterRole", "role"),
    ];

    test("selects objects by the labels of the stack's Namespace objects", () => {
        assert.deepEqual(matched({ kinds: [{ kinds: ["Pod"] }], namespaceSelector: { matchLabels: { env: "prod" } } }, stack), [
            "Pod prod/in-prod",
            MISSING_NAMESPACE,
        ]);
        assert.deepEqual(
            matched({ kinds: [{ kinds: ["Pod"] }], namespaceSelector: { matchExpressions: [{ key: "env", operator: "NotIn", values: ["prod"] }] } }, stack),
            ["Pod dev/in-dev", MISSING_NAMESPACE],
        );
    });

    test("issue 43.5: an object in a namespace the stack does not declare gets Gatekeeper's match error under a namespaceSelector, never a silent miss", () => {
        // gator v3.23.1 with the same objects: "unable to match constraints: failed to run Match criteria: namespace selector for namespace-scoped object but missing Namespace".
        const match = { kinds: [{ kinds: ["Pod"] }], namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": "unknown" } } };
        assert.deepEqual(matched(match, stack), [MISSING_NAMESPACE]);
        assert.deepEqual(matched({ kinds: [{ kinds: ["Pod"] }], namespaceSelector: { matchLabels: { env: "nowhere" } } }, stack), [MISSING_NAMESPACE]);
    });

    test("a Namespace is selected by its own labels", () => {
        assert.deepEqual(matched({ kinds: [{ kinds: ["Namespace"] }], namespaceSelector: { matchLabels: { env: "dev" } } }, stack), [
            "Namespace -/dev",
        ]);
    });

    test("cluster-scoped objects other than Namespaces always pass the namespaceSelector", () => {
        assert.deepEqual(matched({ kinds: [{ kinds: ["ClusterRole"] }], namespaceSelector: { matchLabels: { env: "none" } } }, stack), [
            "ClusterRole -/role",
        ]);
    });
});

describe("scope and name", () => {
    const objects = [pod("web-1", "n"), obj("v1", "Namespace", "n"), obj("storage.k8s.io/v1", "StorageClass", "fast"), pod("db-1")];

    test("scope Cluster selects cluster-scoped objects and Namespaces, Namespaced the others", () => {
        assert.deepEqual(matched({ scope: "Cluster" }, objects), ["Namespace -/n", "StorageClass -/fast"]);
        assert.deepEqual(matched({ scope: "Namespaced" }, objects), ["Pod n/web-1", "Pod default/db-1"]);
        assert.equal(matched({ scope: "*" }, objects).length, 4);
        assert.throws(() => matched({ scope: "cluster" }, objects), /spec.match.scope: must be "\*", "Cluster" or "Namespaced"/);
    });

    test("name matches exactly or with a glob", () => {
        assert.deepEqual(matched({ name: "web-*" }, objects), ["Pod n/web-1"]);
        assert.deepEqual(matched({ name: "*-1" }, objects), ["Pod n/web-1", "Pod default/db-1"]);
        assert.deepEqual(matched({ name: "fast" }, objects), ["StorageClass -/fast"]);
    });

    test("an unknown match field is an error", () => {
        assert.throws(() => matched({ excludedNamespace: ["x"] } as never, objects), /unknown match field "excludedNamespace"/);
    });
});
