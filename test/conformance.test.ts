/**
 * The whole shared Gatekeeper conformance file through the engine, as `npm run conformance` runs it.
 * CI clones the repository next to shared/, so the file is found relative to the repository root.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { allTemplates } from "../policies/gatekeeper/templates";
import { formatFailure, readCases, runConformance, summaryLine } from "../tools/conformance";
import { missingShared, sharedPath, testNeeding } from "./skip";

const casesFile = sharedPath("conformance", "gatekeeper", "cases.json");
const templatesFile = sharedPath("conformance", "gatekeeper", "templates.json");

testNeeding("the template registry has every library template with its kind, category, description and schema", () => {
    const library: Array<{ template: string; constraintKind: string; category: string; description: string; parameterSchema: unknown }> =
        JSON.parse(readFileSync(templatesFile, "utf8")).templates;
    assert.deepEqual(allTemplates.map((t) => t.template).sort(), library.map((t) => t.template).sort());
    for (const expected of library) {
        const rule = allTemplates.find((t) => t.template === expected.template)!;
        assert.equal(rule.kind, expected.constraintKind, expected.template);
        assert.equal(rule.category, expected.category, expected.template);
        assert.equal(rule.description, expected.description, expected.template);
        // httpsonly's schema is damaged in templates.json (see its meta.warnings) and repaired in the template.
        if (expected.template !== "httpsonly") assert.deepEqual(rule.parameterSchema, expected.parameterSchema, expected.template);
    }
}, missingShared(["conformance", "gatekeeper", "templates.json"]));

testNeeding("every CREATE case of the shared Gatekeeper conformance file passes", () => {
    const cases = readCases(casesFile);
    const report = runConformance(cases);
    const failures = report.outcomes.filter((o) => o.status === "failed").map(formatFailure);
    assert.equal(report.failed, 0, `${summaryLine(report)}\n${failures.join("\n")}`);
    assert.ok(report.passed > 0, summaryLine(report));
    const creates = cases.filter((c) => c.operation === "CREATE").length;
    assert.equal(report.passed, creates, "every CREATE case is run, none skipped");
}, missingShared(["conformance", "gatekeeper", "cases.json"]));

const nodePortCase = {
    id: "synthetic/nodeport",
    constraintKind: "K8sBlockNodePort",
    constraintMatch: { kinds: [{ apiGroups: [""], kinds: ["Service"] }] },
    operation: "CREATE",
    object: { apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { type: "NodePort" } },
    assertions: [{ violations: 1 as const, message: "NodePort" }],
    expectDeny: true,
};

test("the runner fails a case whose assertion does not hold, naming expected and actual", () => {
    const report = runConformance([{ ...nodePortCase, assertions: [{ violations: "no" as const }] }]);
    assert.equal(report.failed, 1);
    const text = formatFailure(report.outcomes[0]);
    assert.match(text, /expected no violation\(s\), got 1/);
    assert.match(text, /User is not allowed to create service of type NodePort/);
});

test("the runner passes a case whose assertions hold and skips UPDATE cases", () => {
    const report = runConformance([nodePortCase, { ...nodePortCase, id: "u", operation: "UPDATE" }]);
    assert.deepEqual([report.passed, report.failed, report.skipped], [1, 0, 1]);
    assert.equal(summaryLine(report), "conformance: 1 passed, 0 failed, 1 skipped");
});

test("the runner reports a constraint that cannot be built as a failure", () => {
    const report = runConformance([{ ...nodePortCase, constraintKind: "K8sNoSuchThing" }]);
    assert.equal(report.failed, 1);
    assert.match(report.outcomes[0].problems[0], /unknown constraint kind "K8sNoSuchThing"/);
});

test("the runner checks expectDeny against the enforcement action", () => {
    const report = runConformance([{ ...nodePortCase, enforcementAction: "warn" }]);
    assert.equal(report.failed, 1);
    assert.match(report.outcomes[0].problems.join("\n"), /expected the object to be denied, it was admitted/);
});
