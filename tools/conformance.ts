/**
 * Runs Gatekeeper library conformance cases (the format of shared/conformance/gatekeeper/cases.json)
 * through the same engine and templates the policy pack uses.
 *
 *   npm run conformance -- <cases.json>
 *
 * Prints every failing case with its expected and actual violations, then the summary line
 * `conformance: N passed, N failed, N skipped`; exits 1 when a case fails. UPDATE cases are
 * skipped: a preview only ever creates (or replaces) objects.
 */
import { readFileSync } from "node:fs";
import { buildConstraint, EMPTY_CONFIG, evaluate, type TemplateRegistry } from "../policies/gatekeeper/engine";
import { goRegex } from "../policies/gatekeeper/engine/go-regex";
import type { Match } from "../policies/gatekeeper/engine/match";
import { templateRegistry } from "../policies/gatekeeper/templates";
import type { K8sObject } from "../policies/gatekeeper/types";

export interface CaseAssertion {
    /** "yes": at least one; "no": none; a number: exactly that many. */
    violations: "yes" | "no" | number;
    /** Only count violations whose message matches this regular expression. */
    message?: string;
}

export interface ConformanceCase {
    id: string;
    constraintKind: string;
    constraintName?: string;
    constraintParameters?: Record<string, unknown>;
    constraintMatch?: Match;
    enforcementAction?: string;
    operation: string;
    object: K8sObject;
    inventory?: K8sObject[];
    assertions: CaseAssertion[];
    expectDeny?: boolean;
}

export interface CaseOutcome {
    id: string;
    status: "passed" | "failed" | "skipped";
    /** Why the case failed or was skipped. */
    problems: string[];
    /** Messages of the violations found (all enforcement actions). */
    messages: string[];
}

export interface ConformanceReport {
    outcomes: CaseOutcome[];
    passed: number;
    failed: number;
    skipped: number;
}

export function runCase(c: ConformanceCase, registry: TemplateRegistry = templateRegistry): CaseOutcome {
    if (c.operation !== "CREATE") {
        return { id: c.id, status: "skipped", problems: [`${c.operation} is not applicable at preview time`], messages: [] };
    }
    let messages: string[];
    let denied: boolean;
    try {
        const constraint = buildConstraint(
            {
                kind: c.constraintKind,
                name: c.constraintName ?? c.id,
                enforcementAction: c.enforcementAction,
                match: c.constraintMatch,
                parameters: c.constraintParameters,
            },
            registry,
        );
        // In a stack the object under review is part of the inventory too.
        const inventory = [...(c.inventory ?? []), c.object];
        const results = evaluate([c.object], [constraint], EMPTY_CONFIG, { inventory });
        messages = results.map((r) => r.message);
        denied = results.some((r) => r.blocking);
    } catch (err) {
        return { id: c.id, status: "failed", problems: [`error: ${(err as Error).message}`], messages: [] };
    }
    const problems = c.assertions.map((a) => checkAssertion(a, messages)).filter((p): p is string => p !== undefined);
    if (c.expectDeny !== undefined && c.expectDeny !== denied) {
        problems.push(`expected the object to be ${c.expectDeny ? "denied" : "admitted"}, it was ${denied ? "denied" : "admitted"}`);
    }
    return { id: c.id, status: problems.length ? "failed" : "passed", problems, messages };
}

function checkAssertion(assertion: CaseAssertion, messages: readonly string[]): string | undefined {
    const pattern = assertion.message === undefined ? undefined : goRegex(assertion.message);
    const matching = pattern ? messages.filter((m) => pattern.test(m)) : messages;
    const { violations } = assertion;
    const ok =
        violations === "yes" ? matching.length > 0 : violations === "no" ? matching.length === 0 : matching.length === violations;
    if (ok) return undefined;
    const which = pattern ? ` matching /${assertion.message}/` : "";
    const expected = violations === "yes" ? "at least one" : violations === "no" ? "no" : String(violations);
    return `expected ${expected} violation(s)${which}, got ${matching.length}`;
}

export function runConformance(cases: readonly ConformanceCase[], registry: TemplateRegistry = templateRegistry): ConformanceReport {
    const outcomes = cases.map((c) => runCase(c, registry));
    const count = (status: CaseOutcome["status"]) => outcomes.filter((o) => o.status === status).length;
    return { outcomes, passed: count("passed"), failed: count("failed"), skipped: count("skipped") };
}

export function readCases(file: string): ConformanceCase[] {
    const data = JSON.parse(readFileSync(file, "utf8"));
    const cases = Array.isArray(data) ? data : data?.cases;
    if (!Array.isArray(cases)) throw new Error(`${file}: expected {"cases": [...]} or a list of cases`);
    return cases;
}

export function formatFailure(o: CaseOutcome): string {
    const lines = [`FAIL ${o.id}`, ...o.problems.map((p) => `  ${p}`), "  actual violations:"];
    if (o.messages.length === 0) lines.push("    (none)");
    for (const m of o.messages) lines.push(`    - ${m}`);
    return lines.join("\n");
}

export function summaryLine(r: ConformanceReport): string {
    return `conformance: ${r.passed} passed, ${r.failed} failed, ${r.skipped} skipped`;
}

function main(argv: string[]): number {
    const file = argv[0];
    if (!file) {
        console.error("usage: npm run conformance -- <cases.json>");
        return 2;
    }
    let cases: ConformanceCase[];
    try {
        cases = readCases(file);
    } catch (err) {
        console.error(`conformance: cannot read ${file}: ${(err as Error).message}`);
        return 2;
    }
    const report = runConformance(cases);
    for (const outcome of report.outcomes) if (outcome.status === "failed") console.log(formatFailure(outcome));
    console.log(summaryLine(report));
    return report.failed > 0 ? 1 : 0;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
