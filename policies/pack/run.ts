/**
 * The pack evaluated in process, with the policy server's semantics (@pulumi/policy server.js):
 * a policy's level is its config's enforcementLevel, else its own, else the pack's (advisory);
 * disabled policies do not run; getConfig() is the policy's config without enforcementLevel;
 * "remediate" counts as mandatory for stack policies. Used by tests, the render and the bench.
 */
import type { EnforcementLevel, PolicyPackConfig, StackValidationArgs, StackValidationPolicy } from "@pulumi/policy";
import { readPackConfig } from "./config";
import { packPolicies } from "./policies";
import type { PackResource } from "./resources";

export const PACK_ENFORCEMENT_LEVEL: EnforcementLevel = "advisory";

export interface PackViolation {
    policy: string;
    enforcementLevel: Exclude<EnforcementLevel, "disabled" | "remediate">;
    message: string;
    urn?: string;
}

export interface PackResult {
    violations: PackViolation[];
    /** Policies that ran. */
    policies: string[];
}

type PolicyConfig = Record<string, unknown> & { enforcementLevel?: EnforcementLevel };

function configOf(config: PolicyPackConfig, name: string): PolicyConfig {
    const c = config[name] ?? config.all;
    return (typeof c === "string" ? { enforcementLevel: c } : c ?? {}) as PolicyConfig;
}

/**
 * The pack over a stack's resources. `previous`: the stack's resources before this change (the
 * last render's), when known: the Gatekeeper policies then judge an unchanged object as the audit
 * does and a changed one as an UPDATE (policies/gatekeeper/engine/evaluate.ts); without it, every
 * object as a CREATE (what `pulumi preview` gives a policy: no earlier state).
 */
export function runPack(resources: readonly PackResource[], config: PolicyPackConfig = {}, policies: readonly StackValidationPolicy[] = packPolicies, previous?: readonly PackResource[]): PackResult {
    const violations: PackViolation[] = [];
    const ran: string[] = [];
    for (const policy of policies) {
        const { enforcementLevel: configured, ...settings } = configOf(config, policy.name);
        let level = configured ?? policy.enforcementLevel ?? PACK_ENFORCEMENT_LEVEL;
        if (level === "disabled") continue;
        if (level === "remediate") level = "mandatory";
        ran.push(policy.name);
        const args = {
            resources,
            previousResources: previous,
            stackTags: new Map<string, string>(),
            getConfig: () => settings,
            notApplicable: () => {
                throw new NotApplicable();
            },
        } as unknown as StackValidationArgs;
        try {
            const returned = policy.validateStack(args, (message, urn) => violations.push({ policy: policy.name, enforcementLevel: level as PackViolation["enforcementLevel"], message, urn }));
            if (returned instanceof Promise) throw new Error(`policy ${policy.name} is asynchronous; the in-process runner evaluates synchronously`);
        } catch (err) {
            if (err instanceof NotApplicable) continue;
            throw new Error(`policy ${policy.name} failed: ${(err as Error).message}`);
        }
    }
    return { violations, policies: ran };
}

class NotApplicable extends Error {}

/** The pack config of an environment: policies/config/<stack>.json, checked against the pack (config.ts). */
export function loadPackConfig(stack: string): PolicyPackConfig {
    return readPackConfig(stack, packPolicies);
}

export const mandatory = (r: PackResult) => r.violations.filter((v) => v.enforcementLevel === "mandatory");

/** Counts per enforcement level and every mandatory violation, for the render summary and test failures. */
export function verdict(r: PackResult, opts: { listAdvisory?: boolean } = {}): string {
    const count = (level: string) => r.violations.filter((v) => v.enforcementLevel === level).length;
    const dryrun = r.violations.filter((v) => v.message.startsWith("dryrun:")).length;
    const lines = [`policy pack: ${r.policies.length} policies, ${count("mandatory")} mandatory, ${count("advisory") - dryrun} advisory, ${dryrun} dryrun violation(s)`];
    const show = (v: PackViolation) => `  - [${v.enforcementLevel}] ${v.policy}: ${v.message}${v.urn ? ` (${v.urn.split("::").pop()})` : ""}`;
    lines.push(...mandatory(r).map(show));
    if (opts.listAdvisory) lines.push(...r.violations.filter((v) => v.enforcementLevel !== "mandatory").map(show));
    else lines.push(...r.violations.filter((v) => v.message.startsWith("dryrun:")).map((v) => `  - ${dryrunLine(v)}`));
    return lines.join("\n");
}

/**
 * One dryrun violation as "dryrun <Kind>/<name> <Constraint>/<constraint name>: <message>": the
 * object from the message's "[Implied by Kind/name]" (a pod template) or else the URN.
 */
export function dryrunLine(v: PackViolation): string {
    const text = v.message.replace(/^dryrun: /, "");
    const m = /^(\S+\/\S+?): (?:\[Implied by (\S+)\] )?([\s\S]*)$/.exec(text);
    const urnObject = () => {
        const [type, name] = (v.urn ?? "").split("::").slice(-2);
        return type && name ? `${type.split(":").pop()}/${name}` : "(stack)";
    };
    if (!m) return `dryrun ${urnObject()}: ${text}`;
    return `dryrun ${m[2] ?? urnObject()} ${m[1]}: ${m[3]}`;
}
