/**
 * The two Services of a StatefulSet (section 2.2, 2.3): a headless one named by spec.serviceName,
 * which gives each pod the stable DNS name <statefulset>-<ordinal>.<service>.<namespace>.svc.cluster.local,
 * and a ClusterIP one that clients use.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import { withoutSettlingWait } from "./engineOrder";

export interface StatefulServicesArgs {
    /** The client Service's name; the headless one is <name>-headless. */
    name: string;
    namespace: string;
    labels: Record<string, string>;
    selector: Record<string, string>;
    ports: { name: string; port: number }[];
    /** Only the headless Service (pods nobody connects to through a virtual IP, e.g. queue workers). */
    headlessOnly?: boolean;
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
    const client = args.headlessOnly ? undefined : new k8s.core.v1.Service(resourceName, {
        metadata: withoutSettlingWait({ name: args.name, namespace: args.namespace, labels: args.labels }),
        spec: { type: "ClusterIP", selector: clientSelector, ports },
    }, opts);
    return { headless, client, headlessName, host: `${args.name}.${args.namespace}.svc.cluster.local` };
}

/** A client of a data store: the pods allowed to connect to it. */
export interface StoreClient {
    namespace: string;
    selector: Record<string, string>;
    description: string;
}
