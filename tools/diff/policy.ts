/**
 * Policy results of the two renders and which of them appeared or disappeared.
 *
 * The evaluation itself belongs to the policy pack (policies/); this module only adapts it:
 * `loadPolicyEvaluator` is the seam where the pack's in-process evaluation is plugged in, and
 * until a revision provides one the report says "not available" instead of guessing.
 */
import * as fs from "fs";
import * as path from "path";
import type { K8sObject } from "../../policies/gatekeeper/types";

export interface PolicyFinding {
    /** Constraint kind and name, e.g. "K8sRequiredProbes/must-have-probes". */
    constraint: string;
    enforcementAction: string;
    /** "Deployment ops/bridge" */
    object: string;
    message: string;
}

/** Evaluates one stack's policy configuration against its rendered objects. */
export type PolicyEvaluator = (stack: string, objects: K8sObject[]) => PolicyFinding[] | Promise<PolicyFinding[]>;

export type PolicyDiff =
    | { available: false; reason: string }
    | { available: true; appeared: PolicyFinding[]; disappeared: PolicyFinding[]; unchangedCount: number };

const key = (f: PolicyFinding) => [f.constraint, f.enforcementAction, f.object, f.message].join("\u0000");

export function diffFindings(base: readonly PolicyFinding[], head: readonly PolicyFinding[]): PolicyDiff {
    const before = new Set(base.map(key));
    const after = new Set(head.map(key));
    const dedupe = (fs: readonly PolicyFinding[]) => [...new Map(fs.map((f) => [key(f), f])).values()];
    return {
        available: true,
        appeared: dedupe(head.filter((f) => !before.has(key(f)))),
        disappeared: dedupe(base.filter((f) => !after.has(key(f)))),
        unchangedCount: [...after].filter((k) => before.has(k)).length,
    };
}

/**
 * The in-process evaluation of the policy pack at `root`, when that revision has one:
 * policies/evaluate.ts exporting `evaluateStack(stack, objects)` with results shaped like the
 * Gatekeeper engine's EvaluationResult. Undefined when the revision provides none.
 */
export async function loadPolicyEvaluator(root: string): Promise<PolicyEvaluator | undefined> {
    const modulePath = path.join(root, "policies", "evaluate.ts");
    if (!fs.existsSync(modulePath)) return undefined;
    const mod = await import(modulePath);
    const evaluateStack = mod.evaluateStack ?? mod.default?.evaluateStack;
    if (typeof evaluateStack !== "function") return undefined;
    return async (stack, objects) => ((await evaluateStack(stack, objects)) as EngineResult[]).map(toFinding);
}

/** The fields of the engine's EvaluationResult this report uses. */
interface EngineResult {
    constraintKind: string;
    constraintName: string;
    enforcementAction: string;
    object: { kind: string; namespace?: string; name?: string };
    message: string;
}

function toFinding(r: EngineResult): PolicyFinding {
    return {
        constraint: `${r.constraintKind}/${r.constraintName}`,
        enforcementAction: r.enforcementAction,
        object: `${r.object.kind} ${r.object.namespace ? `${r.object.namespace}/` : ""}${r.object.name ?? ""}`,
        message: r.message,
    };
}
