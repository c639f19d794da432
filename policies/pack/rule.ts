/**
 * The shape of the specification's own rules: each is a CrossGuard StackValidationPolicy (they
 * cross-reference objects of the stack) built from a pure check over the stack, so the same
 * check runs in the pack, in process (tests, render, bench) and in its unit test.
 */
import type { EnforcementLevel, PolicyConfigSchema, ReportViolation, StackValidationArgs, StackValidationPolicy } from "@pulumi/policy";
import type { PackResource } from "./resources";
import { stackView, type StackView } from "./stack";

export interface Finding {
    message: string;
    /** The resource in violation; none when the stack as a whole is. */
    urn?: string;
}

export interface SpecRuleArgs<C> {
    name: string;
    description: string;
    enforcementLevel?: EnforcementLevel;
    /** Settings with their defaults (applied when the pack config leaves them out). */
    configSchema?: PolicyConfigSchema;
    check(stack: StackView, config: C): Finding[];
}

export interface SpecRule<C = any> extends StackValidationPolicy {
    /** The check with defaults applied to `config`, for in-process use. */
    check(stack: StackView, config?: Partial<C>): Finding[];
}

// One view per resource list: the in-process runner hands the same list to every rule.
const views = new WeakMap<readonly PackResource[], StackView>();

export function viewOf(resources: readonly PackResource[]): StackView {
    let view = views.get(resources);
    if (!view) views.set(resources, (view = stackView(resources)));
    return view;
}

export function defaultsOf(schema: PolicyConfigSchema | undefined): Record<string, unknown> {
    const out: Record<string, unknown> = {};
    for (const [key, prop] of Object.entries(schema?.properties ?? {})) if (prop.default !== undefined) out[key] = prop.default;
    return out;
}

export function specRule<C>(args: SpecRuleArgs<C>): SpecRule<C> {
    const defaults = defaultsOf(args.configSchema);
    const check = (stack: StackView, config: Partial<C> = {}) => args.check(stack, { ...defaults, ...config } as C);
    return {
        name: args.name,
        description: args.description,
        enforcementLevel: args.enforcementLevel ?? "mandatory",
        configSchema: args.configSchema,
        check,
        validateStack(stackArgs: StackValidationArgs, report: ReportViolation) {
            const view = viewOf(stackArgs.resources as unknown as PackResource[]);
            for (const f of check(view, stackArgs.getConfig<Partial<C>>())) report(f.message, f.urn);
        },
    };
}
