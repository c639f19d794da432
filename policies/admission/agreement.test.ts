/**
 * Both enforcement points agree: for every fixture of every template with an admission rule
 * (the template's own unit tests, and the CREATE cases of shared/conformance/gatekeeper/cases.json),
 * the CrossGuard verdict (the pack's Gatekeeper engine) equals the verdict of the generated
 * ValidatingAdmissionPolicy, its CEL evaluated offline (./k8sCel, @marcbachmann/cel-js).
 *
 * The templates' fixtures are recorded while their own test files run in this process: each
 * template's validate() is wrapped to keep every (parameters, reviewed object) it is given.
 */
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { test } from "node:test";
import { allTemplates } from "../gatekeeper/templates";
import type { RuleContext } from "../gatekeeper/types";
import { checkAgreement, fixturesFromCases, type Agreement, type Fixture } from "./agreement";
import { admissionRules } from "./rules";

const recorded = new Map<string, Fixture>();
for (const template of allTemplates) {
    if (!admissionRules.has(template.kind)) continue;
    const original = template.validate.bind(template);
    template.validate = (ctx: RuleContext) => {
        const { review, parameters } = ctx;
        const object = structuredClone(review.object);
        const fixture: Fixture = {
            id: `${template.template}.test.ts #${recorded.size + 1}`,
            constraint: {
                kind: template.kind,
                name: "test",
                parameters: structuredClone(parameters ?? {}),
                match: { kinds: [{ apiGroups: [review.kind.group], kinds: [review.kind.kind] }] },
            },
            object: { ...object, kind: object.kind ?? review.kind.kind },
        };
        const key = JSON.stringify([fixture.constraint, fixture.object]);
        if (!recorded.has(key)) recorded.set(key, fixture);
        return original(ctx);
    };
}
// The templates' own tests run here (as subtests of this file), feeding `recorded`.
for (const template of allTemplates) {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    if (admissionRules.has(template.kind)) require(`../gatekeeper/templates/${template.template}.test`);
}

const casesFile = path.resolve(__dirname, "..", "..", "..", "shared", "conformance", "gatekeeper", "cases.json");

function summary(results: Agreement[]): string {
    const bad = results.filter((r) => !r.agree);
    return [
        `fixtures ${results.length}, agree ${results.length - bad.length}, disagree ${bad.length}`,
        ...bad.map((r) => `  ${r.id}: CrossGuard ${r.crossGuard ? "violation" : "pass"}, admission ${r.admission === undefined ? "no policy" : r.admission ? "refuses" : "admits"} ${r.detail.join("; ")}`),
    ].join("\n");
}

test("the templates' own test fixtures: CrossGuard and the admission policy agree", () => {
    const fixtures = [...recorded.values()].filter((f) => {
        // A fixture whose parameters the template's schema rejects is not a constraint either point could load.
        try {
            checkAgreement(f);
            return true;
        } catch {
            return false;
        }
    });
    const results = fixtures.map(checkAgreement);
    console.log(`admission agreement (template tests): ${summary(results)}`);
    assert.ok(results.length >= admissionRules.size, `only ${results.length} fixtures recorded`);
    assert.ok(results.some((r) => r.crossGuard) && results.some((r) => !r.crossGuard), "fixtures of both verdicts");
    assert.deepEqual(results.filter((r) => !r.agree).map((r) => r.id), [], summary(results));
});

test("the shared conformance cases: CrossGuard and the admission policy agree", (t) => {
    if (!existsSync(casesFile)) {
        if (process.env.CI === "true") assert.fail(`${casesFile} is missing`);
        t.skip(`${casesFile} is absent`);
        return;
    }
    const fixtures = fixturesFromCases(JSON.parse(readFileSync(casesFile, "utf8")).cases);
    const results = fixtures.map(checkAgreement);
    console.log(`admission agreement (cases.json): ${summary(results)}`);
    assert.ok(results.length > 80, `only ${results.length} fixtures`);
    assert.ok(results.every((r) => r.admission !== undefined), "every fixture has a policy");
    assert.deepEqual(results.filter((r) => !r.agree).map((r) => r.id), [], summary(results));
});
