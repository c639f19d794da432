/**
 * Serves the pack over the analyzer gRPC protocol: @pulumi/policy's PolicyPack, its public
 * surface, with one change the SDK's surface does not offer, AnalyzeStack building the stack's
 * resources once per call (./sdkAdapter.ts: why, what it restates, and the test that holds it to
 * the SDK).
 */
import { PolicyPack, type EnforcementLevel, type PolicyPackArgs, type StackValidationPolicy } from "@pulumi/policy";
import { withSharedAnalyzeStack } from "./sdkAdapter";

/** `new PolicyPack(name, args)` with AnalyzeStack's resources shared by the pack's stack policies. */
export function servePolicyPack(name: string, args: PolicyPackArgs & { enforcementLevel: EnforcementLevel; policies: StackValidationPolicy[] }): PolicyPack {
    const state = {
        name,
        // The SDK reads the version the same way (policy.js).
        version: require(`${process.cwd()}/package.json`).version, // eslint-disable-line @typescript-eslint/no-var-requires
        enforcementLevel: args.enforcementLevel,
        policies: args.policies,
        config: {},
        stackTags: new Map<string, string>(),
    };
    return withSharedAnalyzeStack(state, () => new PolicyPack(name, args));
}
