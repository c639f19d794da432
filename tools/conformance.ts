/**
 * Runs Gatekeeper library conformance cases (the format of shared/conformance/gatekeeper/cases.json)
 * through the same engine and templates the policy pack uses.
 *
 *   npm run conformance -- <cases.json>
 *
 * Prints every failing case with its expected and actual violations, then the summary line
 * `conformance: N passed, N failed, N skipped`; exits 1 when a case fails. UPDATE cases are
 * skipped: a preview only ever creates (or replaces) objects. A file without cases, a case with an
 * operation other than CREATE, UPDATE, DELETE or CONNECT, or a case without assertions (neither
 * `assertions` nor `expectDeny`) fails, with a message naming the file and the case.
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

/** The admission operations a case may name (admission.k8s.io Operation). */
export const OPERATIONS = ["CREATE", "UPDATE", "DELETE", "CONNECT"] as const;

/** What is wrong with a case's shape, so that it fails with a message instead of a stack trace. */
export function caseProblems(c: unknown): string[] {
    if (!c || typeof c !== "object" || Array.isArray(c)) return ["a case must be an object"];
    const x = c as Record<string, unknown>;
    const problems: string[] = [];
    if (typeof x.constraintKind !== "string" || !x.constraintKind) problems.push("constraintKind must be a non-empty string");
    if (!(OPERATIONS as readonly unknown[]).includes(x.operation)) problems.push(`unknown operation ${JSON.stringify(x.operation)}: expected one of ${OPERATIONS.join(", ")}`);
    if (!x.object || typeof x.object !== "object" || Array.isArray(x.object)) problems.push("object must be a Kubernetes object");
    if (x.inventory !== undefined && !Array.isArray(x.inventory)) problems.push("inventory must be a list of objects");
    if (x.expectDeny !== undefined && typeof x.expectDeny !== "boolean") problems.push("expectDeny must be true or false");
    if (x.assertions !== undefined && !Array.isArray(x.assertions)) problems.push("assertions must be a list");
    const assertions = Array.isArray(x.assertions) ? x.assertions : [];
    if (assertions.length === 0 && x.expectDeny === undefined) problems.push("the case has no assertions (neither assertions[] nor expectDeny): it could not fail");
    assertions.forEach((a, i) => {
        const v = (a as CaseAssertion | null)?.violations;
        if (!(v === "yes" || v === "no" || (typeof v === "number" && Number.isInteger(v) && v >= 0))) {
            problems.push(`assertions[${i}].violations must be "yes", "no" or a count, got ${JSON.stringify(v)}`);
        }
        const m = (a as CaseAssertion | null)?.message;
        if (m !== undefined && typeof m !== "string") problems.push(`assertions[${i}].message must be a string`);
    });
    return problems;
}

export function runCase(c: ConformanceCase, registry: TemplateRegistry = templateRegistry): CaseOutcome {
    const invalid = caseProblems(c);
    if (invalid.length > 0) return { id: String((c as Partial<ConformanceCase>)?.id ?? "(no id)"), status: "failed", problems: invalid.map((p) => `invalid case: ${p}`), messages: [] };
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
    let problems: string[];
    try {
        problems = (c.assertions ?? []).map((a) => checkAssertion(a, messages)).filter((p): p is string => p !== undefined);
    } catch (err) {
        return { id: c.id, status: "failed", problems: [`error: ${(err as Error).message}`], messages };
    }
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
    if (cases.length === 0) throw new Error(`${file}: the file has no case`);
    return cases.map((c, i) => (c && typeof c === "object" && !Array.isArray(c) && typeof c.id === "string" ? c : { ...(c && typeof c === "object" ? c : {}), id: `case ${i + 1}` }));
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

export function main(argv: string[], log: (line: string) => void = console.log, error: (line: string) => void = console.error): number {
    const file = argv[0];
    if (!file) {
        error("usage: npm run conformance -- <cases.json>");
        return 2;
    }
    let cases: ConformanceCase[];
    try {
        cases = readCases(file);
    } catch (err) {
        error(`conformance: cannot read ${file}: ${(err as Error).message}`);
        return 2;
    }
    try {
        const report = runConformance(cases);
        for (const outcome of report.outcomes) if (outcome.status === "failed") log(formatFailure(outcome).replace(/^FAIL /, `FAIL ${file}: `));
        log(summaryLine(report));
        return report.failed > 0 ? 1 : 0;
    } catch (err) {
        error(`conformance: ${file}: ${(err as Error).message}`);
        return 2;
    }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
