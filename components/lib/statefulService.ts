/**
 * What the stateful workloads share (section 2.2, 2.3), as intents:
 * - statefulServices: the two Services of a StatefulSet, a headless one named by spec.serviceName,
 *   which gives each pod the stable DNS name <statefulset>-<ordinal>.<service>.<namespace>.svc.cluster.local,
 *   and a ClusterIP one that clients use;
 * - statefulWorkload: the StatefulSet itself, hardened pods spread across nodes, one data volume
 *   per pod that can grow (claimGrowth.ts), restarted when its ConfigMaps or Secrets change;
 * - storeIngress: a data store's NetworkPolicy, which admits its clients (its own backup, restore
 *   and provisioning jobs among them) on its port and lets it connect to nobody.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../../config";
import type { BackupJobs } from "./backupCronJob";
import { ClaimGuard, growableStatefulSet } from "./claimGrowth";
import { withoutSettlingWait } from "./engineOrder";
import { AppLabels, reloaderAnnotations } from "./labels";
import { allowOnly, podsIn } from "./network";
import { hardenedPodSpec, PodArgs } from "./pod";

export interface StatefulServicesArgs {
    /** The client Service's name; the headless one is <name>-headless. */
    name: string;
    namespace: string;
    labels: Record<string, string>;
    selector: Record<string, string>;
    ports: { name: string; port: number }[];
    /** Only the headless Service (pods nobody connects to through a virtual IP, e.g. queue workers). */
    headlessOnly?: boolean;
    /** The ports the client Service publishes (by name); all of them by default. */
    clientPorts?: string[];
}

export interface StatefulServices {
    headless: k8s.core.v1.Service;
    client?: k8s.core.v1.Service;
    headlessName: string;
    /** The client Service's cluster DNS name. */
    host: string;
}

export function statefulServices(resourceName: string, args: StatefulServicesArgs, opts: pulumi.CustomResourceOptions): StatefulServices {
    const ports = args.ports.map((p) => ({ name: p.name, port: p.port, targetPort: p.name, protocol: "TCP" }));
    const headlessName = `${args.name}-headless`;
    const headless = new k8s.core.v1.Service(`${resourceName}-headless`, {
        metadata: { name: headlessName, namespace: args.namespace, labels: args.labels },
        // Pods are published before they are ready so that peers (and the pod itself) resolve during start-up.
        spec: { clusterIP: "None", publishNotReadyAddresses: true, selector: args.selector, ports },
    }, opts);
    // The same pods by a different selector: no two Services of a namespace share a selector.
    const clientSelector = Object.fromEntries(Object.entries(args.selector).filter(([k]) => k !== "app.kubernetes.io/component"));
    const clientPorts = args.clientPorts ? ports.filter((p) => args.clientPorts!.includes(p.name)) : ports;
    const client = args.headlessOnly ? undefined : new k8s.core.v1.Service(resourceName, {
        metadata: withoutSettlingWait({ name: args.name, namespace: args.namespace, labels: args.labels }),
        spec: { type: "ClusterIP", selector: clientSelector, ports: clientPorts },
    }, opts);
    return { headless, client, headlessName, host: `${args.name}.${args.namespace}.svc.cluster.local` };
}

export interface StatefulWorkloadArgs {
    /** The StatefulSet's name. */
    name: string;
    namespace: string;
    /** The StatefulSet, its pods and its claims carry the labels; the selector picks the pods. */
    app: AppLabels;
    /** The headless Service that names the pods (spec.serviceName). */
    serviceName: string;
    replicas: number;
    /** The pods, spread across nodes by the app's selector in stacks that spread (hardenedPodSpec). */
    pod: Omit<PodArgs, "spreadSelector">;
    /** The volume `data` of each pod: its size, the config key of the size (growableStatefulSet), its storage class. */
    data: {
        size: string;
        sizeKey: string;
        /** The cluster's default class when undefined. */
        storageClass: string | undefined;
        /** Declares the API's default claim retention (Retain when deleted or scaled down) explicitly. */
        retain?: boolean;
    };
    /** The ConfigMaps and Secrets whose change restarts the pods (reloaderAnnotations). */
    reloadOn?: { configMaps?: string[]; secrets?: string[] };
    podManagementPolicy?: "OrderedReady" | "Parallel";
    /** Declares the API's default update strategy (RollingUpdate) explicitly. */
    rollingUpdate?: boolean;
    /** The run's volume guard (main.ts): judges the volume sizes against the last deploy. */
    volumeGuard: ClaimGuard;
}

/** A StatefulSet of hardened pods, each with a data volume that can grow. */
export function statefulWorkload(name: string, cfg: StackConfig, args: StatefulWorkloadArgs, opts: pulumi.CustomResourceOptions): k8s.apps.v1.StatefulSet {
    const { app, data } = args;
    return growableStatefulSet(name, {
        metadata: { name: args.name, namespace: args.namespace, labels: app.labels, annotations: reloaderAnnotations(cfg, args.reloadOn ?? {}) },
        spec: {
            serviceName: args.serviceName,
            replicas: args.replicas,
            selector: { matchLabels: app.selector },
            podManagementPolicy: args.podManagementPolicy,
            updateStrategy: args.rollingUpdate ? { type: "RollingUpdate" } : undefined,
            template: { metadata: { labels: app.labels }, spec: hardenedPodSpec(cfg, { ...args.pod, spreadSelector: app.selector }) },
            // Deleting or scaling down the StatefulSet never deletes its data.
            persistentVolumeClaimRetentionPolicy: data.retain ? { whenDeleted: "Retain", whenScaled: "Retain" } : undefined,
            volumeClaimTemplates: [{
                metadata: { name: "data", labels: app.labels },
                spec: { accessModes: ["ReadWriteOnce"], storageClassName: data.storageClass, resources: { requests: { storage: data.size } } },
            }],
        },
    }, opts, { data: data.sizeKey }, args.volumeGuard);
}

/** A client of a data store: the pods allowed to connect to it. */
export interface StoreClient {
    namespace: string;
    selector: Record<string, string>;
    description: string;
}

export interface StoreIngressArgs {
    namespace: string;
    app: AppLabels;
    port: number;
    /** What the descriptions call the store ("Redis": "the Redis backup job"). */
    title: string;
    clients: StoreClient[];
    /** Its backup and restore jobs, admitted after the clients. */
    backup: BackupJobs;
    /** Its provisioning Job, when it has one (provisioningJob.ts). */
    provision?: StoreClient;
}

/** A data store's NetworkPolicy: its clients, backup, restore and provisioning jobs on its port; no egress. */
export function storeIngress(name: string, args: StoreIngressArgs, opts: pulumi.CustomResourceOptions): k8s.networking.v1.NetworkPolicy {
    const ns = args.namespace;
    const clients: StoreClient[] = [
        ...args.clients,
        { namespace: ns, selector: args.backup.backupSelector, description: `the ${args.title} backup job` },
        { namespace: ns, selector: args.backup.restoreSelector, description: `the ${args.title} restore job` },
        ...(args.provision ? [args.provision] : []),
    ];
    return allowOnly(name, {
        namespace: ns,
        podSelector: args.app.selector,
        labels: args.app.labels,
        ingress: clients.map((c) => ({ peer: podsIn(c.namespace, c.selector, c.description), ports: [{ port: args.port }] })),
        egress: [],
    }, opts);
}
