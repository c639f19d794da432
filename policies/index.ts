/**
 * The CrossGuard policy pack of the operations environment:
 *   pulumi preview --policy-pack policies --policy-pack-config policies/config/<stack>.json
 * Gatekeeper constraints (constraints/<stack>.yaml, named in the config) and the specification's
 * own rules (spec/). Dependencies resolve from the repository's node_modules.
 */
import { packPolicies } from "./pack/policies";
import { PACK_ENFORCEMENT_LEVEL } from "./pack/run";
import { servePolicyPack } from "./pack/server";

// @pulumi/policy's PolicyPack, with AnalyzeStack building the stack's resources once per call (pack/server.ts).
servePolicyPack("ops-environment", {
    description: "Gatekeeper constraints and the specification's rules for the operations environment",
    enforcementLevel: PACK_ENFORCEMENT_LEVEL,
    policies: packPolicies,
});
