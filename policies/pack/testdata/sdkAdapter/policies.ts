/**
 * Stack policies that use every part of @pulumi/policy's AnalyzeStack that policies/pack/sdkAdapter.ts
 * restates, served twice by ../sdkAdapter.test.ts: by the SDK's own server (./sdk) and through the
 * adapter (./adapter). Each reports what it was handed, so the two answers differ wherever the
 * adapter and the SDK differ.
 */
import { validateStackResourcesOfType, type PolicyPackArgs, type PolicyResource, type StackValidationPolicy } from "@pulumi/policy";

/** A resource class with a Pulumi type (the SDK's fast "not applicable" path and isType by type). */
class Thing {
    static readonly __pulumiType = "test:index:Thing";
}

/** A resource class known only by isInstance (no Pulumi type). */
class Other {
    static isInstance(o: any): boolean {
        return o?.__pulumiType === "test:index:Other";
    }
}

const urns = (rs: readonly PolicyResource[] | undefined) => (rs ?? []).map((r) => r.urn);

/** Everything a stack policy is handed, as JSON (props through the unknown-checking proxy). */
function seen(resources: readonly PolicyResource[], config: unknown, tags: ReadonlyMap<string, string>): string {
    return JSON.stringify({
        resources: resources.map((r) => ({
            type: r.type,
            urn: r.urn,
            name: r.name,
            props: r.props,
            opts: r.opts,
            provider: r.provider && { type: r.provider.type, urn: r.provider.urn, name: r.provider.name, props: r.provider.props },
            parent: r.parent?.urn,
            dependencies: urns(r.dependencies),
            propertyDependencies: Object.fromEntries(Object.entries(r.propertyDependencies).map(([k, v]) => [k, urns(v)])),
            isThing: r.isType(Thing as any),
            isOther: r.isType(Other as any),
            asOther: r.asType(Other as any) !== undefined,
        })),
        config,
        tags: [...tags],
    });
}

let lastList: unknown;

export const policies: StackValidationPolicy[] = [
    {
        name: "sees-all",
        description: "reports everything it is handed",
        enforcementLevel: "mandatory",
        severity: "high",
        validateStack(args, report) {
            lastList = args.resources;
            report(seen(args.resources, args.getConfig(), args.stackTags), args.resources[0]?.urn);
        },
    },
    {
        // The one answer the two servers give differently: the SDK builds a list per policy, the adapter one per call.
        name: "shared-list",
        description: "says whether it was handed the list sees-all was handed",
        validateStack(args, report) {
            report(`shared: ${args.resources === lastList}`);
        },
    },
    {
        name: "objects",
        description: "reports objects and empty messages",
        enforcementLevel: "advisory",
        validateStack(args, report) {
            const r = report as (m: unknown, urn?: string) => void;
            r({ message: "as an object", urn: args.resources[0]?.urn, severity: "low" });
            r({ name: "renamed", description: "another description", enforcementLevel: "mandatory" });
            r("");
            r("with no urn");
        },
    },
    {
        name: "configured",
        description: "reads its config; its level is the pack's unless configured",
        configSchema: { properties: { limit: { type: "number" } } },
        validateStack(args, report) {
            report(`limit ${args.getConfig<{ limit?: number }>().limit}`);
        },
    },
    { name: "disabled-by-config", description: "never runs once configured disabled", enforcementLevel: "mandatory", validateStack: (_args, report) => report("ran") },
    { name: "remediate-by-config", description: "configured remediate, reported as mandatory", validateStack: (_args, report) => report("ran") },
    {
        name: "not-applicable",
        description: "not applicable unless a resource is named wanted",
        validateStack(args, report) {
            if (!args.resources.some((r) => r.name === "wanted")) args.notApplicable("nothing is wanted");
            report("wanted");
        },
    },
    { name: "typed", description: "things only (a Pulumi type)", validateStack: validateStackResourcesOfType(Thing as any, (things, _args, report) => report(`${things.length} things`)) },
    { name: "typed-by-instance", description: "others only (isInstance)", validateStack: validateStackResourcesOfType(Other as any, (others, _args, report) => report(`${others.length} others`)) },
    {
        name: "throws",
        description: "fails when a resource is named boom",
        validateStack(args) {
            if (args.resources.some((r) => r.name === "boom")) throw new Error("boom");
        },
    },
    {
        name: "later",
        description: "reports after a wait",
        async validateStack(_args, report) {
            await new Promise((resolve) => setTimeout(resolve, 5));
            report("later");
        },
    },
    // A resource policy: AnalyzeStack passes it over.
    { name: "per-resource", description: "a resource policy", enforcementLevel: "mandatory", validateResource: (_args: unknown, report: (m: string) => void) => report("ran") } as unknown as StackValidationPolicy,
];

export const packArgs: PolicyPackArgs & { enforcementLevel: "advisory"; policies: StackValidationPolicy[] } = {
    description: "the SDK adapter's test pack",
    enforcementLevel: "advisory",
    policies,
};
