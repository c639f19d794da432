/**
 * Both enforcement points agree: for every fixture of every template with an admission rule
 * (the template's own unit tests, and the CREATE cases of shared/conformance/gatekeeper/cases.json),
 * the CrossGuard verdict (the pack's Gatekeeper engine) equals the verdict of the generated
 * ValidatingAdmissionPolicy, its CEL evaluated offline (policies/cel/environment.ts, @marcbachmann/cel-js).
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
import type { K8sObject } from "../gatekeeper/types";
import { specRules } from "../pack/policies";
import { resourceOf } from "../pack/resources";
import { defaultsOf } from "../pack/rule";
import { stackView } from "../pack/stack";
import { generateSpecAdmissionPolicies } from "./generate";
import { admit } from "./simulate";
import { specAdmissionRules } from "./spec";

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

// The specification's single-object rules: their own tests' stacks, recorded the same way.
const specRecorded: Array<{ rule: (typeof specRules)[number]; objects: K8sObject[]; config: Record<string, unknown> }> = [];
for (const rule of specRules) {
    if (!specAdmissionRules.has(rule.name)) continue;
    const original = rule.check.bind(rule);
    rule.check = (stack, config = {}) => {
        specRecorded.push({ rule, objects: stack.objects.map((o) => structuredClone(o.object)), config: structuredClone(config) as Record<string, unknown> });
        return original(stack, config);
    };
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(`../spec/${rule.name}.test`);
}

const casesFile = path.resolve(__dirname, "..", "..", "..", "shared", "conformance", "gatekeeper", "cases.json");

function summary(results: Agreement[]): string {
    const bad = results.filter((r) => !r.agree && !r.nullOnly);
    const nullOnly = results.filter((r) => r.nullOnly);
    return [
        `fixtures ${results.length}, agree ${results.length - bad.length - nullOnly.length}, null only ${nullOnly.length}, disagree ${bad.length}`,
        ...nullOnly.map((r) => `  ${r.id}: null only (CrossGuard ${r.crossGuard ? "violation" : "pass"} on the null, its verdict on the decoded object is admission's)`),
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
    assert.deepEqual(results.filter((r) => !r.agree && !r.nullOnly).map((r) => r.id), [], summary(results));
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
    // A fixture without a policy is one whose constraint can never be violated (no check to make).
    const unbound = results.filter((r) => r.admission === undefined);
    assert.deepEqual(unbound.filter((r) => !r.detail.every((d) => d.includes("never reports a violation"))).map((r) => r.id), [], "every other fixture has a policy");
    assert.deepEqual(results.filter((r) => !r.agree && !r.nullOnly).map((r) => r.id), [], summary(results));
});

test("the specification's single-object rules: CrossGuard and the admission policy agree on their tests' objects", () => {
    const results: Agreement[] = [];
    const seen = new Set<string>();
    for (const { rule, objects, config } of specRecorded) {
        const admission = specAdmissionRules.get(rule.name)!;
        const kinds = new Set(admission.resources.flatMap((r) => r.kinds));
        const settings = { ...defaultsOf(rule.configSchema), ...config };
        const generated = generateSpecAdmissionPolicies([{ rule: admission, enforcementLevel: "mandatory", config: settings }]);
        for (const object of objects) {
            if (!kinds.has(object.kind ?? "")) continue;
            const key = JSON.stringify([rule.name, settings, object]);
            if (seen.has(key)) continue;
            seen.add(key);
            const crossGuard = rule.check(stackView([resourceOf(object)]), config).length > 0;
            const outcome = generated.policies.length === 0 ? undefined : admit(generated.policies[0], generated.bindings[0], object);
            const refused = outcome === undefined ? false : outcome.failed.length > 0 || outcome.errors.length > 0;
            results.push({ id: `${rule.name}.test.ts #${results.length + 1}`, crossGuard, admission: refused, agree: refused === crossGuard, detail: outcome ? [...outcome.failed, ...outcome.errors] : [] });
        }
    }
    console.log(`admission agreement (spec rules' tests): ${summary(results)}`);
    assert.ok(results.some((r) => r.crossGuard) && results.some((r) => !r.crossGuard), "fixtures of both verdicts");
    assert.deepEqual(results.filter((r) => !r.agree && !r.nullOnly).map((r) => r.id), [], summary(results));
});
