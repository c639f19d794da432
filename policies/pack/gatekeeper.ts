/**
 * Gatekeeper constraints through CrossGuard: one stack policy per enforcement action, each
 * evaluating only the constraints with that action from the constraint file its config names.
 *   deny   -> mandatory: blocks the preview/update
 *   warn   -> advisory: reported, never blocks
 *   dryrun -> advisory with messages prefixed "dryrun:", optionally appended to an audit JSON
 *             lines file; never blocks
 * A stack policy, because templates read data.inventory and namespaceSelector needs the stack's
 * Namespaces.
 */
import * as fs from "fs";
import * as path from "path";
import type { PolicyConfigSchema, StackValidationPolicy } from "@pulumi/policy";
import { createEvaluator, loadConstraintSet, requireConstraints, type EnforcementAction, type EvaluationResult, type Evaluator } from "../gatekeeper/engine";
import { packTemplateRegistry } from "./templates";
import type { PackResource } from "./resources";
import { PACK_DIR } from "./paths";
import { viewOf } from "./rule";

export interface GatekeeperPolicyConfig {
    /** The constraint file (Constraints plus at most one Config), relative to the pack directory. */
    constraints: string;
    /** dryrun only: a JSON lines file each dryrun violation is appended to, relative to the pack directory. */
    auditLog?: string;
}

const configSchema: PolicyConfigSchema = {
    properties: {
        constraints: { type: "string", description: "Gatekeeper constraint file, relative to the policy pack directory" },
        auditLog: { type: "string", description: "dryrun: JSON lines file the dryrun violations are appended to (relative to the pack directory)" },
    },
    required: ["constraints"],
};

const evaluators = new Map<string, Evaluator>();

/** The evaluator of one action's constraints from a constraint file (loaded and checked once per process). */
export function evaluatorFor(constraintFile: string, action: EnforcementAction): Evaluator {
    const file = path.resolve(PACK_DIR, constraintFile);
    const key = `${action}\u0000${file}`;
    let evaluator = evaluators.get(key);
    if (!evaluator) {
        const set = requireConstraints(loadConstraintSet(fs.readFileSync(file, "utf8"), packTemplateRegistry(), path.relative(PACK_DIR, file)), path.relative(PACK_DIR, file));
        evaluator = createEvaluator(set.constraints.filter((c) => c.enforcementAction === action), set.config);
        evaluators.set(key, evaluator);
    }
    return evaluator;
}

export interface GatekeeperFinding {
    urn: string;
    result: EvaluationResult;
}

/** The violations of one action's constraints over a stack. */
export function evaluateGatekeeper(resources: readonly PackResource[], config: GatekeeperPolicyConfig, action: EnforcementAction, previous?: readonly PackResource[]): GatekeeperFinding[] {
    if (!config?.constraints) throw new Error(`gatekeeper-${action}: the pack config must name the constraint file (constraints: "constraints/<env>.yaml")`);
    const { objects } = viewOf(resources);
    // With the stack's earlier resources: creations, updates (with the old object) and unchanged objects as the audit sees them.
    const before = previous === undefined ? undefined : viewOf(previous).objects.map((o) => o.object);
    const results = evaluatorFor(config.constraints, action).evaluate(objects.map((o) => o.object), before === undefined ? {} : { previous: before });
    return results.map((result) => ({ urn: objects[result.objectIndex].urn, result }));
}

const DESCRIPTIONS: Record<EnforcementAction, string> = {
    deny: "Gatekeeper constraints with enforcementAction deny: a violation blocks the deployment",
    warn: "Gatekeeper constraints with enforcementAction warn: violations are reported as warnings",
    dryrun: "Gatekeeper constraints with enforcementAction dryrun: violations are only recorded (prefixed dryrun:, optionally in the audit log)",
};

export function messageOf(result: EvaluationResult): string {
    const text = `${result.constraintKind}/${result.constraintName}: ${result.message}`;
    return result.enforcementAction === "dryrun" ? `dryrun: ${text}` : text;
}

/**
 * What is wrong with an auditLog setting: it must be a JSON lines file (.jsonl), absolute or inside
 * the pack directory, so a render never appends to a source file (../README.md, index.ts).
 */
export function auditLogProblem(file: unknown): string | undefined {
    const expected = "expected a JSON lines file ending in .jsonl, absolute or relative to the pack directory without leaving it (e.g. \"audit/dryrun.jsonl\")";
    if (typeof file !== "string" || !file.endsWith(".jsonl") || path.basename(file) === ".jsonl") return `${JSON.stringify(file)}: ${expected}`;
    if (!path.isAbsolute(file) && (path.normalize(file).startsWith("..") || file.split(/[\\/]/).includes(".."))) return `${JSON.stringify(file)} leaves the pack directory; ${expected}`;
    return undefined;
}

function appendAudit(file: string, findings: GatekeeperFinding[]): void {
    if (findings.length === 0) return;
    const problem = auditLogProblem(file);
    if (problem) throw new Error(`gatekeeper-dryrun.auditLog: ${problem}`);
    const target = path.resolve(PACK_DIR, file);
    fs.mkdirSync(path.dirname(target), { recursive: true });
    const time = new Date().toISOString();
    const lines = findings.map(({ urn, result }) =>
        JSON.stringify({ time, constraint: `${result.constraintKind}/${result.constraintName}`, enforcementAction: result.enforcementAction, object: result.object, urn, message: result.message }),
    );
    fs.appendFileSync(target, lines.join("\n") + "\n");
}

export function gatekeeperPolicy(action: EnforcementAction): StackValidationPolicy {
    return {
        name: `gatekeeper-${action}`,
        description: DESCRIPTIONS[action],
        enforcementLevel: action === "deny" ? "mandatory" : "advisory",
        configSchema,
        validateStack(args, report) {
            const config = args.getConfig<GatekeeperPolicyConfig>();
            const previous = (args as unknown as { previousResources?: PackResource[] }).previousResources;
            const findings = evaluateGatekeeper(args.resources as unknown as PackResource[], config, action, previous);
            for (const { urn, result } of findings) report(messageOf(result), urn);
            if (action === "dryrun" && config.auditLog) appendAudit(config.auditLog, findings);
        },
    };
}

export const gatekeeperPolicies: StackValidationPolicy[] = (["deny", "warn", "dryrun"] as const).map(gatekeeperPolicy);
