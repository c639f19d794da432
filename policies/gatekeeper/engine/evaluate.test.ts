import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { RegoEvalError, type K8sObject, type TemplateRule } from "../types";
import { buildConstraint, createTemplateRegistry, parseGatekeeperConfig } from "./constraints";
import { createEvaluator, evaluate } from "./evaluate";
import { matched, obj, probe } from "./test-support";

const pod = (name: string, namespace?: string) => obj("v1", "Pod", name, namespace);
const podMatch = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] };

describe("enforcement actions", () => {
    test("deny blocks, warn and dryrun are recorded without blocking; deny is the default", () => {
        const constraints = [
            probe(podMatch, { name: "default-action" }),
            probe(podMatch, { name: "deny", enforcementAction: "deny" }),
            probe(podMatch, { name: "warn", enforcementAction: "warn" }),
            probe(podMatch, { name: "dryrun", enforcementAction: "dryrun" }),
        ];
        const results = evaluate([pod("p", "n")], constraints);
        assert.deepEqual(
            results.map((r) => [r.constraintName, r.enforcementAction, r.blocking]),
            [
                ["default-action", "deny", true],
                ["deny", "deny", true],
                ["warn", "warn", false],
                ["dryrun", "dryrun", false],
            ],
        );
    });

    test("results name the constraint and the object", () => {
        const [result] = evaluate([pod("p", "n")], [probe(podMatch, { name: "c" })]);
        assert.deepEqual(result, {
            constraintKind: "TestProbe",
            constraintName: "c",
            enforcementAction: "deny",
            blocking: true,
            object: { apiVersion: "v1", kind: "Pod", namespace: "n", name: "p" },
            objectIndex: 0,
            message: "Pod n/p",
        });
    });

    test("an unknown enforcement action is an error naming the constraint", () => {
        assert.throws(() => probe(podMatch, { name: "x", enforcementAction: "block" }), /constraint TestProbe\/x: spec.enforcementAction must be one of deny, warn, dryrun; got "block"/);
    });
});

describe("Config exclusions", () => {
    const objects = [pod("a", "kube-system"), pod("b", "team-a"), pod("c"), obj("v1", "Namespace", "kube-system")];
    const config = (processes: string[], excludedNamespaces = ["kube-*"]) =>
        parseGatekeeperConfig({ spec: { match: [{ excludedNamespaces, processes }] } });

    test('exclusions for the "*", "webhook" and "audit" processes apply', () => {
        for (const process of ["*", "webhook", "audit"]) {
            assert.deepEqual(matched({}, objects, config([process])), ["Pod team-a/b", "Pod default/c"], process);
        }
    });

    test("exclusions for other processes (sync, mutation-webhook) do not", () => {
        assert.equal(matched({}, objects, config(["sync", "mutation-webhook"])).length, 4);
    });

    test("an object without a namespace is excluded with default", () => {
        assert.deepEqual(matched({}, objects, config(["*"], ["default"])), ["Pod kube-system/a", "Pod team-a/b", "Namespace -/kube-system"]);
    });

    test("cluster-scoped objects are not excluded by namespace", () => {
        const role = obj("rbac.authorization.k8s.io/v1", "ClusterRole", "r");
        assert.deepEqual(matched({}, [role], config(["*"], ["*"])), ["ClusterRole -/r"]);
    });

    test("an invalid Config is an error", () => {
        assert.throws(() => parseGatekeeperConfig({ spec: { match: [{ excludedNamespaces: "kube-system", processes: ["*"] }] } }), /spec.match\[0\].excludedNamespaces must be a list of strings/);
    });
});

describe("pod expansion", () => {
    const template = {
        metadata: { labels: { app: "web" }, annotations: { note: "from-template" } },
        spec: { containers: [{ name: "app", image: "nginx" }] },
    };
    const workloads: Array<[string, string, Record<string, unknown>]> = [
        ["apps/v1", "Deployment", { template }],
        ["apps/v1", "StatefulSet", { template }],
        ["apps/v1", "DaemonSet", { template }],
        ["apps/v1", "ReplicaSet", { template }],
        ["batch/v1", "Job", { template }],
        ["batch/v1", "CronJob", { jobTemplate: { spec: { template } } }],
        ["v1", "ReplicationController", { template }],
    ];

    for (const [apiVersion, kind, spec] of workloads) {
        test(`a ${kind}'s pod template is reviewed as a Pod`, () => {
            const parent: K8sObject = { apiVersion, kind, metadata: { name: "Web", namespace: "shop", labels: { owner: "x" } }, spec };
            const results = evaluate([parent], [probe(podMatch)]);
            assert.equal(results.length, 1);
            const [r] = results;
            assert.equal(r.message, `[Implied by ${kind}/Web] Pod shop/web-pod`);
            assert.deepEqual(r.object, { apiVersion, kind, namespace: "shop", name: "Web" });
            assert.deepEqual(r.impliedPod, { apiVersion: "v1", kind: "Pod", namespace: "shop", name: "web-pod" });
        });
    }

    test("the synthesized Pod carries the template's metadata and spec, not the parent's labels", () => {
        const seen: K8sObject[] = [];
        const spy: TemplateRule = {
            kind: "TestSpy",
            template: "test-spy",
            category: "general",
            description: "",
            parameterSchema: null,
            validate: ({ review }) => (seen.push(review.object), []),
        };
        const constraint = buildConstraint({ kind: "TestSpy", name: "spy", match: podMatch }, createTemplateRegistry([spy]));
        evaluate([{ apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", labels: { owner: "x" } }, spec: { template } }], [constraint]);
        assert.deepEqual(seen, [
            {
                apiVersion: "v1",
                kind: "Pod",
                metadata: { labels: { app: "web" }, annotations: { note: "from-template" }, name: "d-pod" },
                spec: template.spec,
            },
        ]);
    });

    test("a pod template whose metadata is null expands to a Pod without name or namespace, as Gatekeeper's expansion leaves it (issue 21)", () => {
        const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", namespace: "shop" }, spec: { template: { ...template, metadata: null } } };
        // matched() reports "<Kind> <namespace>/<name>": the Pod has neither; a namespaces list does not filter it out.
        assert.deepEqual(matched({ ...podMatch, namespaces: ["elsewhere"] }, [deployment]), ["[Implied by Deployment/d] Pod -/"]);
        assert.deepEqual(matched({ ...podMatch, labelSelector: { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] } }, [deployment]), ["[Implied by Deployment/d] Pod -/"]);
    });

    test("labelSelector applies to the pod template's labels", () => {
        const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d", labels: { owner: "x" } }, spec: { template } };
        assert.equal(matched({ ...podMatch, labelSelector: { matchLabels: { app: "web" } } }, [deployment]).length, 1);
        assert.equal(matched({ ...podMatch, labelSelector: { matchLabels: { owner: "x" } } }, [deployment]).length, 0);
    });

    test("a constraint on Deployments sees the Deployment itself, not its pod", () => {
        const deployment = { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template } };
        assert.deepEqual(matched({ kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] }, [deployment]), ["Deployment default/d"]);
        assert.deepEqual(matched({}, [deployment]), ["Deployment default/d", "[Implied by Deployment/d] Pod default/d-pod"]);
    });

    test("match.source chooses declared objects or expanded pods", () => {
        const objects = [pod("p"), { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: { template } }];
        assert.deepEqual(matched({ ...podMatch, source: "Original" }, objects), ["Pod default/p"]);
        assert.deepEqual(matched({ ...podMatch, source: "Generated" }, objects), ["[Implied by Deployment/d] Pod default/d-pod"]);
    });

    test("objects that are not workloads, or workloads without a template, are not expanded", () => {
        const objects = [
            { apiVersion: "v1", kind: "ConfigMap", metadata: { name: "c" }, spec: { template } },
            { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "d" }, spec: {} },
        ];
        assert.deepEqual(matched(podMatch, objects), []);
    });
});

describe("inventory", () => {
    const inventoryRule: TemplateRule = {
        kind: "TestInventory",
        template: "test-inventory",
        category: "general",
        description: "",
        parameterSchema: null,
        validate: ({ review, inventory }) =>
            inventory.list("ConfigMap", { namespace: review.namespace }).map((cm) => ({ msg: `sees ${cm.metadata?.name}` })),
    };
    const constraint = buildConstraint(
        { kind: "TestInventory", name: "inv", match: podMatch },
        createTemplateRegistry([inventoryRule]),
    );
    const configMap = (name: string, namespace?: string) => obj("v1", "ConfigMap", name, namespace);

    test("templates see the objects of the whole stack, narrowed by namespace (default when unset)", () => {
        const results = evaluate([pod("p"), configMap("a"), configMap("b", "default"), configMap("c", "other")], [constraint]);
        assert.deepEqual(results.map((r) => r.message), ["sees a", "sees b"]);
    });

    test("an explicit inventory replaces the stack", () => {
        const results = evaluate([pod("p")], [constraint], undefined, { inventory: [configMap("x")] });
        assert.deepEqual(results.map((r) => r.message), ["sees x"]);
    });

    test("an evaluator compiled once can evaluate several stacks", () => {
        const evaluator = createEvaluator([constraint]);
        assert.equal(evaluator.evaluate([pod("p"), configMap("a")]).length, 1);
        assert.equal(evaluator.evaluate([pod("p")]).length, 0);
    });
});

describe("template failures and duplicates", () => {
    const rule = (validate: TemplateRule["validate"]): TemplateRule => ({
        kind: "TestRule",
        template: "test-rule",
        category: "general",
        description: "",
        parameterSchema: null,
        validate,
    });
    const constraintFor = (r: TemplateRule) => buildConstraint({ kind: "TestRule", name: "r", match: podMatch }, createTemplateRegistry([r]));

    test("a template that throws yields an error result instead of aborting the evaluation", () => {
        const failing = rule(() => {
            throw new Error("boom");
        });
        const results = evaluate([pod("a"), pod("b")], [constraintFor(failing)]);
        assert.equal(results.length, 2);
        assert.equal(results[0].error, true);
        assert.equal(results[0].message, "template test-rule failed: boom");
        assert.equal(results[0].blocking, true);
    });

    test("a Rego evaluation error is one violation of every matching constraint of the template, as Gatekeeper reports it", () => {
        // Gatekeeper runs the matching constraints of a template in one query; when it fails
        // (frameworks drivers/rego Query), each constraint gets the error text as its message.
        const conflict = "template:50: eval_conflict_error: functions must not produce multiple outputs for same inputs";
        const failsOnTwo = rule(({ parameters }) => {
            if ((parameters as { fail?: boolean }).fail) throw new RegoEvalError(conflict);
            return [{ msg: "ordinary" }];
        });
        const other: TemplateRule = { ...rule(() => [{ msg: "other template" }]), kind: "OtherRule", template: "other-rule" };
        const registry = createTemplateRegistry([failsOnTwo, other]);
        const constraints = [
            buildConstraint({ kind: "TestRule", name: "fails", match: podMatch, parameters: { fail: true } }, registry),
            buildConstraint({ kind: "TestRule", name: "fine", match: podMatch, enforcementAction: "warn" }, registry),
            buildConstraint({ kind: "TestRule", name: "elsewhere", match: { kinds: [{ apiGroups: [""], kinds: ["ConfigMap"] }] } }, registry),
            buildConstraint({ kind: "OtherRule", name: "o", match: podMatch }, registry),
        ];
        const results = evaluate([pod("a")], constraints);
        assert.deepEqual(
            results.map((r) => [r.constraintName, r.message, r.enforcementAction, r.blocking, r.error ?? false]),
            [
                ["fails", conflict, "deny", true, false],
                ["fine", conflict, "warn", false, false],
                ["o", "other template", "deny", true, false],
            ],
        );
    });

    test("the same violation reported twice counts once, as in Rego's violation set", () => {
        const twice = rule(() => [{ msg: "same" }, { msg: "same" }, { msg: "other" }]);
        assert.deepEqual(evaluate([pod("a")], [constraintFor(twice)]).map((r) => r.message), ["same", "other"]);
    });
});
