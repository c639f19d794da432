/**
 * Who owns a field of an object on the cluster. The kubernetes provider applies every object with
 * server-side apply under its own field manager. A field another manager changed since (kubectl
 * edit/scale/patch, a script) belongs to that manager, and the provider's next apply of a different
 * value is refused as a field conflict unless it is forced: the drift workflow would find the drift
 * and `pulumi up` could not repair it. So every object the program declares carries the provider's
 * `pulumi.com/patchForce: "true"` (pulumi-kubernetes 4.25.0, pkg/await/await.go patchForce: the
 * annotation makes each apply take the declared fields back; docs/product-settings.md).
 *
 * The one field the program declares but another controller owns by design is the replica count
 * of an autoscaled workload: the HorizontalPodAutoscaler sets it through the scale subresource.
 * Forcing it would fight the autoscaler on every update, so those workloads ignore later changes
 * of spec.replicas (AUTOSCALED_REPLICAS): the declared count is the count at creation, the
 * autoscaler's minimum is where the configuration takes effect afterwards. With server-side apply
 * the provider then leaves the field out of its apply while the autoscaler owns it
 * (pkg/await/await.go handleSSAIgnoreFields).
 */
import * as pulumi from "@pulumi/pulumi";

export const PATCH_FORCE_ANNOTATION = "pulumi.com/patchForce";

/** Kubernetes object resources (kubernetes:<group>/<version>:<Kind>); not helm releases, charts or yaml groups. */
export function isKubernetesObject(type: string): boolean {
    return /^kubernetes:[^:]+\/v[0-9a-z]+:[A-Z]\w*$/.test(type) && !type.startsWith("kubernetes:helm.sh/") && !type.startsWith("kubernetes:yaml/");
}

function annotated(annotations: unknown): pulumi.Input<Record<string, string>> {
    if (pulumi.Output.isInstance(annotations) || annotations instanceof Promise)
        return pulumi.output(annotations as pulumi.Input<Record<string, string>>).apply((a) => ({ ...(a ?? {}), [PATCH_FORCE_ANNOTATION]: "true" }));
    return { ...((annotations as Record<string, string> | undefined) ?? {}), [PATCH_FORCE_ANNOTATION]: "true" };
}

/** The transformation: every Kubernetes object gets the provider's patchForce annotation. */
export const forceDeclaredFields: pulumi.ResourceTransformation = (args) => {
    if (!isKubernetesObject(args.type)) return undefined;
    const metadata = args.props.metadata;
    if (pulumi.Output.isInstance(metadata) || metadata instanceof Promise) {
        const m = pulumi.output(metadata as pulumi.Input<Record<string, unknown>>);
        return { props: { ...args.props, metadata: m.apply((x) => ({ ...(x ?? {}), annotations: { ...((x?.annotations as Record<string, string>) ?? {}), [PATCH_FORCE_ANNOTATION]: "true" } })) }, opts: args.opts };
    }
    const plain = (metadata ?? {}) as Record<string, unknown>;
    return { props: { ...args.props, metadata: { ...plain, annotations: annotated(plain.annotations) } }, opts: args.opts };
};

/** Options of the program's top-level components: their objects take back drifted fields. */
export function programOwned<T extends pulumi.ComponentResourceOptions>(opts: T = {} as T): T & { transformations: pulumi.ResourceTransformation[] } {
    return { ...opts, transformations: [...(opts.transformations ?? []), forceDeclaredFields] };
}

/** Options of a workload a HorizontalPodAutoscaler scales: the autoscaler owns spec.replicas after creation. */
export const AUTOSCALED_REPLICAS: pulumi.CustomResourceOptions = { ignoreChanges: ["spec.replicas"] };
