/**
 * The CrossGuard policy pack of the operations environment:
 *   pulumi preview --policy-pack policies --policy-pack-config policies/config/<stack>.json
 * Gatekeeper constraints (constraints/<stack>.yaml, named in the config) and the specification's
 * own rules (spec/). Dependencies resolve from the repository's node_modules.
 */
import { PolicyPack } from "@pulumi/policy";
import { packPolicies } from "./pack/policies";
import { PACK_ENFORCEMENT_LEVEL } from "./pack/run";

new PolicyPack("ops-environment", {
    description: "Gatekeeper constraints and the specification's rules for the operations environment",
    enforcementLevel: PACK_ENFORCEMENT_LEVEL,
    policies: packPolicies,
});
