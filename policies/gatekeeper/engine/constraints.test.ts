import assert from "node:assert/strict";
import { describe, test } from "node:test";
import { templateRegistry } from "../templates";
import { parseAllDocuments } from "yaml";
import { buildConstraint, createTemplateRegistry, loadConstraintSet, parseConstraintObjects, parseGatekeeperConfig } from "./constraints";
import { evaluate } from "./evaluate";
import { obj, probeRule, testRegistry } from "./test-support";

const constraintYaml = (name: string, spec: string) => `apiVersion: constraints.gatekeeper.sh/v1beta1
kind: TestProbe
metadata:
  name: ${name}
spec:
${spec}`;

describe("loading constraints from YAML", () => {
    test("reads every constraint of a multi-document file, with enforcement action, match and parameters", () => {
        const yaml = [
            constraintYaml("pods", `  match:\n    kinds:\n      - apiGroups: [""]\n        kinds: ["Pod"]\n  parameters:\n    tag: a`),
            constraintYaml("warn-all", "  enforcementAction: warn"),
            "",
        ].join("\n---\n");
        const { constraints } = loadConstraintSet(yaml, testRegistry);
        assert.deepEqual(
            constraints.map((c) => [c.kind, c.name, c.enforcementAction, c.parameters]),
            [
                ["TestProbe", "pods", "deny", { tag: "a" }],
                ["TestProbe", "warn-all", "warn", {}],
            ],
        );
        assert.deepEqual(constraints[0].match, { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] });
    });

    test("reads the Config object's exclusions and applies them", () => {
        const yaml = `${constraintYaml("all", "  match: {}")}
---
apiVersion: config.gatekeeper.sh/v1alpha1
kind: Config
metadata:
  name: config
  namespace: gatekeeper-system
spec:
  match:
    - excludedNamespaces: ["kube-*"]
      processes: ["*"]
`;
        const { constraints, config } = loadConstraintSet(yaml, testRegistry);
        assert.equal(config.isNamespaceExcluded("kube-system"), true);
        assert.equal(config.isNamespaceExcluded("team-a"), false);
        const results = evaluate([obj("v1", "Pod", "a", "kube-system"), obj("v1", "Pod", "b", "team-a")], constraints, config);
        assert.deepEqual(results.map((r) => r.message), ["Pod team-a/b"]);
    });

    test("flattens a List of constraints", () => {
        const yaml = `apiVersion: v1
kind: List
items:
  - apiVersion: constraints.gatekeeper.sh/v1beta1
    kind: TestProbe
    metadata: {name: one}
  - apiVersion: constraints.gatekeeper.sh/v1
    kind: TestProbe
    metadata: {name: two}
`;
        assert.deepEqual(loadConstraintSet(yaml, testRegistry).constraints.map((c) => c.name), ["one", "two"]);
    });

    test("an unknown constraint kind is an error naming the file and listing the known kinds", () => {
        const yaml = constraintYaml("x", "  match: {}").replace("kind: TestProbe", "kind: K8sTypo");
        assert.throws(
            () => loadConstraintSet(yaml, testRegistry, "gatekeeper.yaml"),
            /^Error: gatekeeper.yaml: constraint K8sTypo\/x: unknown constraint kind "K8sTypo"; no template is registered for it \(known kinds: TestProbe\)$/,
        );
    });

    test("parameters that break the template's schema are an error naming the file, the constraint and the key", () => {
        assert.throws(
            () => loadConstraintSet(constraintYaml("x", "  parameters:\n    tag: [1]"), testRegistry, "constraints/prod.yaml"),
            /^ParameterError: constraints\/prod.yaml: constraint TestProbe\/x: parameters.tag must be a string/,
        );
    });

    test("documents that are not constraints or a Config are errors naming the file and document", () => {
        assert.throws(
            () => loadConstraintSet("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n", testRegistry, "gatekeeper.yaml"),
            /gatekeeper.yaml: object 1: v1 ConfigMap c is neither a Gatekeeper constraint nor a Config/,
        );
        assert.throws(
            () => loadConstraintSet("apiVersion: templates.gatekeeper.sh/v1\nkind: ConstraintTemplate\nmetadata: {name: t}\n", testRegistry),
            /ConstraintTemplate t does not belong in a constraint file: .* policies\/templates\/t\.yaml \(then npm run gatekeeper:wasm\)/,
        );
    });

    test("duplicates, a second Config and invalid YAML are errors", () => {
        const one = constraintYaml("same", "  match: {}");
        assert.throws(() => loadConstraintSet(`${one}\n---\n${one}`, testRegistry), /duplicate constraint TestProbe\/same/);
        const config = "apiVersion: config.gatekeeper.sh/v1alpha1\nkind: Config\nmetadata: {name: config}\n";
        assert.throws(() => loadConstraintSet(`${config}---\n${config}`, testRegistry), /more than one Gatekeeper Config object/);
        assert.throws(() => loadConstraintSet("kind: [unclosed", testRegistry, "bad.yaml"), /^Error: bad.yaml: document 1: /);
    });

    test("an unknown spec field is an error (a typo would otherwise drop parameters silently)", () => {
        assert.throws(
            () => loadConstraintSet(constraintYaml("x", "  parameter:\n    tag: a"), testRegistry),
            /^Error: constraints: constraint TestProbe\/x: unknown spec field "parameter" \(known: enforcementAction, match, parameters\)/,
        );
    });

    test("a constraint without a name is an error", () => {
        assert.throws(() => buildConstraint({ kind: "TestProbe", name: "" }, testRegistry), /metadata.name is required/);
    });
});

describe("parameter validation against the template's schema", () => {
    test("a value of the wrong type names the constraint and the key", () => {
        assert.throws(
            () => buildConstraint({ kind: "K8sAllowedRepos", name: "repos", parameters: { repos: "docker.io/" } }, templateRegistry),
            /^ParameterError: constraint K8sAllowedRepos\/repos: parameters.repos must be a list, got string "docker.io\/"$/,
        );
        assert.throws(
            () => buildConstraint({ kind: "K8sAllowedRepos", name: "repos", parameters: { repos: ["ok", 3] } }, templateRegistry),
            /constraint K8sAllowedRepos\/repos: parameters.repos\[1\] must be a string, got number 3/,
        );
        assert.throws(
            () => buildConstraint({ kind: "K8sReplicaLimits", name: "r", parameters: { ranges: [{ min_replicas: 1.5 }] } }, templateRegistry),
            /parameters.ranges\[0\].min_replicas must be an integer/,
        );
    });

    test("an unknown key is an error listing the known keys", () => {
        assert.throws(
            () => buildConstraint({ kind: "K8sAllowedRepos", name: "repos", parameters: { repo: ["x/"] } }, templateRegistry),
            /constraint K8sAllowedRepos\/repos: unknown parameter parameters.repo \(known: repos\)/,
        );
    });

    test("enum values are enforced", () => {
        assert.throws(
            () => buildConstraint({ kind: "K8sRequiredResources", name: "r", parameters: { limits: ["gpu"] } }, templateRegistry),
            /parameters.limits\[0\] must be one of "cpu", "memory", got "gpu"/,
        );
    });

    test("schema defaults are applied and nulls dropped, as the API server does", () => {
        const c = buildConstraint({ kind: "K8sStorageClass", name: "sc", parameters: { allowedStorageClasses: null } as never }, templateRegistry);
        assert.deepEqual(c.parameters, { includeStorageClassesInMessage: true });
        const d = buildConstraint({ kind: "K8sDisallowAnonymous", name: "a", parameters: {} }, templateRegistry);
        assert.deepEqual(d.parameters, { disallowAuthenticated: false });
    });

    test("templates without a schema accept any parameter object", () => {
        const noSchema = createTemplateRegistry([{ ...probeRule, kind: "NoSchema", parameterSchema: null }]);
        assert.deepEqual(buildConstraint({ kind: "NoSchema", name: "n", parameters: { anything: [1] } }, noSchema).parameters, {
            anything: [1],
        });
        assert.throws(() => buildConstraint({ kind: "NoSchema", name: "n", parameters: [] as never }, noSchema), /parameters must be an object/);
    });
});

test("the Config's spec.sync.syncOnly is read (the kinds a Rego template sees in data.inventory); a bad entry is an error naming it", () => {
    const config = parseGatekeeperConfig({ spec: { sync: { syncOnly: [{ group: "apps", version: "v1", kind: "Deployment" }, { version: "v1", kind: "Namespace" }] } } });
    assert.deepEqual(config.syncOnly, [
        { group: "apps", version: "v1", kind: "Deployment" },
        { group: "", version: "v1", kind: "Namespace" },
    ]);
    assert.equal(parseGatekeeperConfig({ spec: {} }).syncOnly, undefined);
    assert.throws(() => parseGatekeeperConfig({ spec: { sync: { syncOnly: [{ kind: "Pod" }] } } }, "constraints/x.yaml: Config config"), /constraints\/x\.yaml: Config config: spec\.sync\.syncOnly\[0\] must be \{group: string, version: string, kind: string\}/);
});

describe("parseConstraintObjects, parsing a text once per process", () => {
    /** What yaml gives for the text, parsed afresh (kind: List flattening aside). */
    const fresh = (text: string) => parseAllDocuments(text as string).map((d) => d.toJS());
    const text = "kind: A\nlist: &shared [1, {b: x}]\nagain: *shared\n---\nkind: B\nspec: {n: 2}\n";

    test("hands out new values on every call: what one caller changes, the next does not see", () => {
        const first = parseConstraintObjects(text) as any[];
        assert.deepEqual(first, fresh(text));
        first[0].list[1].b = "changed";
        first[0].list.push(3);
        first[1].spec.n = 3;
        delete first[1].kind;
        const second = parseConstraintObjects(text) as any[];
        assert.deepEqual(second, fresh(text));
        assert.notEqual(second[0], first[0]);
    });

    test("an alias is still the anchored value within one call", () => {
        const [doc] = parseConstraintObjects(text) as any[];
        assert.equal(doc.again, doc.list);
    });

    test("a text whose scalars are objects (YAML 1.1 timestamps) is parsed again, its values not shared", () => {
        const dated = "%YAML 1.1\n---\nkind: A\nat: 2001-12-14\n";
        const [first] = parseConstraintObjects(dated) as any[];
        assert.ok(first.at instanceof Date);
        first.at.setTime(0);
        const [second] = parseConstraintObjects(dated) as any[];
        assert.notEqual(second.at, first.at);
        assert.deepEqual(second, fresh(dated)[0]);
    });

    test("a text with an error fails on every call, with the same message", () => {
        for (let i = 0; i < 2; i++) assert.throws(() => parseConstraintObjects("kind: [unclosed", "bad.yaml"), /^Error: bad.yaml: document 1: /);
    });
});
