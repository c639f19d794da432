/**
 * A volume claim of its own (not a StatefulSet's claim template): the agent server's data and
 * workspace, the booking data, a backup volume, the search engine's fs snapshot repository. The
 * prod tier protects it, so `pulumi destroy` of prod refuses it and its data stays; decommissioning
 * prod is `pulumi state unprotect` first (docs/e2e.md).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";

export interface ProtectedClaimArgs {
    /** The claim's name in the cluster. */
    name: string;
    namespace: string;
    labels: Record<string, string>;
    size: string;
    /** The cluster's default class when undefined. */
    storageClass: string | undefined;
    /** ReadWriteOnce unless given. */
    accessMode?: "ReadWriteOnce" | "ReadWriteMany";
}

export function protectedClaim(name: string, cfg: StackConfig, args: ProtectedClaimArgs, opts: pulumi.CustomResourceOptions): k8s.core.v1.PersistentVolumeClaim {
    return new k8s.core.v1.PersistentVolumeClaim(name, {
        metadata: { name: args.name, namespace: args.namespace, labels: args.labels },
        spec: { accessModes: [args.accessMode ?? "ReadWriteOnce"], storageClassName: args.storageClass, resources: { requests: { storage: args.size } } },
    }, { ...opts, protect: cfg.environment.tier === "prod" });
}
