import assert from "node:assert/strict";
import { test } from "node:test";
import { loadConstraintSet } from "./constraints";
import { templateRegistry } from "../templates";
import { evaluate } from "./evaluate";

const load = (yaml: string) => () => loadConstraintSet(yaml, templateRegistry, "constraints/x.yaml");

const labels = (regex: string) => `apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sRequiredLabels
metadata: {name: owner}
spec:
  match: {kinds: [{apiGroups: [""], kinds: [Namespace]}]}
  parameters:
    labels: [{key: owner, allowedRegex: ${JSON.stringify(regex)}}]
`;

/** A K8sDisallowedTags constraint named `name`; `match` is the spec.match line when given. */
const disallowedTags = (name: string, tags: string, match?: string) => `apiVersion: constraints.gatekeeper.sh/v1beta1
kind: K8sDisallowedTags
metadata: {name: ${name}}
spec:
${match ? `  match: ${match}\n` : ""}  parameters: {tags: ${tags}}
`;

test("an allowedRegex RE2 cannot compile (lookahead, unclosed group) is refused at load, naming the file, the constraint and the parameter (issue 22)", () => {
    assert.throws(load(labels("^(?=.*team).*$")), /^Error: constraints\/x.yaml: constraint K8sRequiredLabels\/owner: spec.parameters.labels\[0\].allowedRegex: invalid regular expression "\^\(\?=\.\*team\)\.\*\$" \(RE2 syntax/);
    assert.throws(load(labels("^(team")), /K8sRequiredLabels\/owner: spec.parameters.labels\[0\].allowedRegex: invalid regular expression "\^\(team".*missing closing \)/);
});

test("a catastrophic-backtracking allowedRegex loads and is evaluated in linear time (issue 22)", { timeout: 10_000 }, () => {
    const { constraints } = loadConstraintSet(labels("^(a+)+$"), templateRegistry);
    const ns = { apiVersion: "v1", kind: "Namespace", metadata: { name: "n", labels: { owner: `${"a".repeat(40)}!` } } };
    const t0 = Date.now();
    const results = evaluate([ns], constraints);
    assert.equal(results.length, 1);
    assert.match(results[0].message, /does not satisfy allowed regex/);
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
});

test("a lone surrogate in a tag is refused: CEL cannot hold it (issue 22)", () => {
    assert.throws(load(disallowedTags("no-edge-tags", '["latest", "\\uD800edge"]')), /constraint K8sDisallowedTags\/no-edge-tags: spec.parameters.tags\[1\]: the string holds a lone UTF-16 surrogate/);
});

test("a constraint name that is not a DNS subdomain (No_Edge_Tags) is refused: it names the admission policy (issue 22)", () => {
    assert.throws(load(disallowedTags("No_Edge_Tags", '["latest"]')), /constraint K8sDisallowedTags\/No_Edge_Tags: metadata.name "No_Edge_Tags" is not a DNS subdomain name/);
});

test('"kube system" as an excluded namespace is refused, in a constraint and in the Config (issue 22)', () => {
    assert.throws(load(disallowedTags("no-edge-tags", '["latest"]', '{excludedNamespaces: ["kube-*", "kube system"]}')), /constraint K8sDisallowedTags\/no-edge-tags: spec.match.excludedNamespaces\[1\]: "kube system" is not a namespace name/);
    const config = `apiVersion: config.gatekeeper.sh/v1alpha1
kind: Config
metadata: {name: config, namespace: gatekeeper-system}
spec:
  match: [{excludedNamespaces: ["kube system"], processes: ["*"]}]
`;
    assert.throws(load(config), /Config config: spec.match\[0\].excludedNamespaces\[0\]: "kube system" is not a namespace name/);
});

test("every problem of a file is reported at once", () => {
    const yaml = `${labels("(?!x)")}---\n${disallowedTags("Bad_Name", '["latest"]')}`;
    assert.throws(load(yaml), (err: Error) => err.message.split("\n").length === 2);
});
