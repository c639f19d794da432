/**
 * Admission-time enforcement of the stack's rule catalogue (issue 12): a ValidatingAdmissionPolicy
 * and its binding per constraint that can be judged on one object (policies/admission), so that
 * what Argo CD creates from the child charts and anything applied by hand meets the same rules
 * the policy pack checks at preview. The catalogue is the stack's own (policies/config/<stack>.json).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import { stackAdmissionPolicies } from "../../policies/admission/catalogue";
import { environmentLabels } from "../lib/labels";

export interface AdmissionPoliciesArgs {
    config: StackConfig;
    /** The Pulumi stack name (selects policies/config/<stack>.json). */
    stack: string;
}

export class AdmissionPolicies extends pulumi.ComponentResource {
    /** Names of the generated policies. */
    public readonly policyNames: string[];
    /** Constraints without an admission policy, with the reason. */
    public readonly skipped: Array<{ constraint: string; reason: string }>;

    constructor(name: string, args: AdmissionPoliciesArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:AdmissionPolicies", name, {}, opts);
        const cfg = args.config;
        const labels = environmentLabels(cfg);
        const generated = stackAdmissionPolicies(args.stack, cfg.environment.tier, { labels });
        const child = { parent: this };
        this.policyNames = [];
        generated.policies.forEach((policy, i) => {
            const policyName: string = policy.metadata.name;
            const created = new k8s.admissionregistration.v1.ValidatingAdmissionPolicy(`${name}-${policyName}`, policy as any, child);
            new k8s.admissionregistration.v1.ValidatingAdmissionPolicyBinding(`${name}-${policyName}-binding`, generated.bindings[i] as any, { ...child, dependsOn: [created] });
            this.policyNames.push(policyName);
        });
        this.skipped = generated.skipped;
        this.registerOutputs({ policyNames: this.policyNames });
    }
}
