/**
 * The namespaces of the environment. (The platform issue grows this into namespaces with
 * guardrails: limit ranges, quotas and default-deny policies.)
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config";

export interface NamespacesArgs {
    config: StackConfig;
}

export class Namespaces extends pulumi.ComponentResource {
    public readonly names: string[];

    constructor(name: string, args: NamespacesArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:platform:Namespaces", name, {}, opts);
        const cfg = args.config;
        this.names = [...new Set([cfg.agentServer.namespace])];
        for (const ns of this.names) {
            new k8s.core.v1.Namespace(`${name}-${ns}`, {
                metadata: { name: ns, labels: { "app.kubernetes.io/part-of": cfg.environment.partOf, "app.kubernetes.io/managed-by": cfg.environment.managedBy } },
            }, { parent: this });
        }
        this.registerOutputs({ names: this.names });
    }
}
