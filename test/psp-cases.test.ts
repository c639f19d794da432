/**
 * Runs the pod-security-policy CREATE cases of the shared Gatekeeper conformance data directly
 * against each template's rule, without the engine: the Review is built from the case's object.
 * UPDATE cases are the engine's business (a preview-time pack skips them) and are not run here.
 */
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { test } from "node:test";
import { missingShared, sharedPath, suiteNeeding } from "./skip";
import type { Inventory, K8sObject, Review, TemplateRule } from "../policies/gatekeeper/types";

interface Assertion {
    violations: "yes" | "no" | number;
    message?: string;
}

interface Case {
    id: string;
    category: string;
    template: string;
    constraintParameters?: Record<string, unknown>;
    constraintMatch?: { namespaces?: string[]; excludedNamespaces?: string[] };
    operation: "CREATE" | "UPDATE";
    object: K8sObject;
    assertions: Assertion[];
}

const missing = missingShared(["conformance", "gatekeeper", "cases.json"]);
const cases: Case[] = missing ? [] : JSON.parse(readFileSync(sharedPath("conformance", "gatekeeper", "cases.json"), "utf8")).cases;
const pspCreateCases = cases.filter((c) => c.category === "pod-security-policy" && c.operation === "CREATE");

const emptyInventory: Inventory = { list: () => [] };

function reviewOf(object: K8sObject, operation: Review["operation"]): Review {
    const apiVersion = object.apiVersion ?? "v1";
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    return {
        object,
        kind: { group, version, kind: object.kind ?? "" },
        operation,
        name: object.metadata?.name,
        namespace: object.metadata?.namespace,
    };
}

/**
 * Whether the constraint's namespace match keeps the object from the rule (the engine's job).
 * The PSP samples carry no namespace, so in the current data no case is excluded.
 */
function excludedByMatch(c: Case): boolean {
    const namespace = c.object.metadata?.namespace;
    const match = c.constraintMatch ?? {};
    if (namespace === undefined) return false;
    if (match.namespaces && !match.namespaces.includes(namespace)) return true;
    return Boolean(match.excludedNamespaces?.includes(namespace));
}

function checkAssertion(messages: string[], assertion: Assertion): void {
    const pattern = assertion.message === undefined ? undefined : new RegExp(assertion.message);
    const matching = pattern ? messages.filter((msg) => pattern.test(msg)) : messages;
    const detail = `${JSON.stringify(assertion)} against ${JSON.stringify(messages)}`;
    if (assertion.violations === "yes") assert.ok(matching.length > 0, `expected violations: ${detail}`);
    else if (assertion.violations === "no") assert.equal(matching.length, 0, `expected no violations: ${detail}`);
    else assert.equal(matching.length, assertion.violations, `expected ${assertion.violations} violations: ${detail}`);
}

suiteNeeding("pod-security-policy conformance cases (CREATE, rule only)", () => {
    test("the shared data has PSP CREATE cases", () => {
        assert.ok(pspCreateCases.length > 0);
    });

    pspCreateCases.forEach((c, index) => {
        const skip = excludedByMatch(c) ? "the constraint's match excludes the object: an engine case" : false;
        test(`${c.id} #${index}`, { skip }, async () => {
            const { rule } = (await import(`../policies/gatekeeper/templates/${c.template}`)) as { rule: TemplateRule };
            assert.equal(rule.template, c.template);
            const found = rule.validate({
                review: reviewOf(c.object, c.operation),
                parameters: c.constraintParameters ?? {},
                inventory: emptyInventory,
            });
            const messages = found.map((v) => v.msg);
            for (const assertion of c.assertions) checkAssertion(messages, assertion);
        });
    });
}, missing);
