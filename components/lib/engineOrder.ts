/**
 * What each object of the applications waits for in `pulumi up`, object by object rather than
 * component by component. A whole-component `dependsOn` made every application object wait for all
 * the namespaces' guardrail objects (every namespace's LimitRange, quota and policies) and the
 * ingress controller's release; each object now waits for the guardrails of its own namespace (the
 * Namespace, and the LimitRange whose defaults its pods take) and only an Ingress waits for the
 * ingress controller, whose admission webhook judges it.
 *
 * And a Service whose pods a Deployment or StatefulSet of the program runs skips the provider's
 * Service wait: that wait is a fixed 10 s after the last change of the Service's Endpoints
 * (pulumi-kubernetes 4.25.0 provider/pkg/await/service.go, processEndpointEvent), not a readiness
 * check of its pods, which the workload's own wait already is (Deployment Available, StatefulSet
 * ready). `pulumi.com/skipAwait: "true"` turns the Service's wait off and nothing else
 * (provider/pkg/await/await.go: the awaiter is skipped on create, update and read; a Service is not
 * among the kinds whose deletion it affects, provider/pkg/metadata/overrides.go
 * allowsSkipAwaitWithDelete). A headless Service has no such wait (service.go shouldWaitForPods).
 */
import * as pulumi from "@pulumi/pulumi";
import { isKubernetesObject } from "./fieldOwnership";

export const SKIP_AWAIT_ANNOTATION = "pulumi.com/skipAwait";
export const INGRESS_TYPE = "kubernetes:networking.k8s.io/v1:Ingress";
export const SERVICE_TYPE = "kubernetes:core/v1:Service";

export interface Placement {
    /** The objects an object of this namespace waits for, or undefined when the namespace is not the program's. */
    guardrails(namespace: string): pulumi.Resource[] | undefined;
    /** What an object waits for when its namespace is not known when it is declared (an output). */
    everyNamespace: pulumi.Resource;
    /** The ingress controller (its admission webhook judges every Ingress). */
    ingressController: pulumi.Resource;
}

function asList(dependsOn: pulumi.ResourceOptions["dependsOn"], more: pulumi.Resource[]): pulumi.ResourceOptions["dependsOn"] {
    if (more.length === 0) return dependsOn;
    if (dependsOn === undefined) return more;
    if (pulumi.Output.isInstance(dependsOn) || dependsOn instanceof Promise)
        return pulumi.output(dependsOn as pulumi.Input<pulumi.Input<pulumi.Resource>[] | pulumi.Resource>).apply((d) => [...(Array.isArray(d) ? d : [d]), ...more]) as pulumi.ResourceOptions["dependsOn"];
    return [...(Array.isArray(dependsOn) ? dependsOn : [dependsOn as pulumi.Input<pulumi.Resource>]), ...more];
}

/** The objects an object declared with these inputs waits for. */
export function waitsFor(type: string, props: Record<string, unknown>, placement: Placement): pulumi.Resource[] {
    if (!isKubernetesObject(type)) return [];
    const metadata = props.metadata as Record<string, unknown> | undefined;
    // null: metadata is an output, its namespace not known when the object is declared.
    const namespace = pulumi.Output.isInstance(metadata) || metadata instanceof Promise ? null : metadata?.namespace;
    // Cluster-scoped (no namespace): no namespace to wait for; a namespace not known when declared: every namespace.
    const namespaced = namespace === undefined ? [] : (typeof namespace === "string" && placement.guardrails(namespace)) || [placement.everyNamespace];
    return type === INGRESS_TYPE ? [...namespaced, placement.ingressController] : namespaced;
}

/** The transformation of the application components: each object waits for its own namespace's guardrails. */
export function placedInOwnNamespace(placement: Placement): pulumi.ResourceTransformation {
    return (args) => {
        const more = waitsFor(args.type, args.props, placement);
        return more.length === 0 ? undefined : { props: args.props, opts: { ...args.opts, dependsOn: asList(args.opts.dependsOn, more) } };
    };
}

/** True for a Service whose only wait is the provider's endpoint settling (not headless, with a selector). */
export function hasSettlingWait(spec: { clusterIP?: unknown; type?: unknown; selector?: unknown } | undefined): boolean {
    if (!spec || spec.clusterIP === "None" || spec.type === "ExternalName" || spec.type === "LoadBalancer") return false;
    const selector = spec.selector;
    return !!selector && typeof selector === "object" && Object.keys(selector).length > 0;
}

/** Metadata of a Service whose pods a Deployment or StatefulSet of the program runs and awaits. */
export function withoutSettlingWait<M extends object>(metadata: M): M & { annotations: pulumi.Input<Record<string, pulumi.Input<string>>> } {
    const annotations = (metadata as { annotations?: Record<string, pulumi.Input<string>> }).annotations;
    return { ...metadata, annotations: { ...(annotations ?? {}), [SKIP_AWAIT_ANNOTATION]: "true" } };
}
