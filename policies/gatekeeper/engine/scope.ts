import type { K8sObject } from "../types";
import { parseApiVersion } from "./gvk";

/**
 * Kinds the API server stores without a namespace, keyed "group/Kind" ("" is the core group).
 * A preview only has the object, not the cluster's discovery data, so scope comes from this list;
 * callers can add their own cluster-scoped custom resources through `isClusterScoped` options.
 */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
    "/Namespace",
    "/Node",
    "/PersistentVolume",
    "/ComponentStatus",
    "rbac.authorization.k8s.io/ClusterRole",
    "rbac.authorization.k8s.io/ClusterRoleBinding",
    "storage.k8s.io/StorageClass",
    "storage.k8s.io/CSIDriver",
    "storage.k8s.io/CSINode",
    "storage.k8s.io/VolumeAttachment",
    "storage.k8s.io/VolumeAttributesClass",
    "apiextensions.k8s.io/CustomResourceDefinition",
    "apiregistration.k8s.io/APIService",
    "admissionregistration.k8s.io/MutatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingWebhookConfiguration",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicy",
    "admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding",
    "scheduling.k8s.io/PriorityClass",
    "node.k8s.io/RuntimeClass",
    "networking.k8s.io/IngressClass",
    "networking.k8s.io/IPAddress",
    "networking.k8s.io/ServiceCIDR",
    "policy/PodSecurityPolicy",
    "extensions/PodSecurityPolicy",
    "certificates.k8s.io/CertificateSigningRequest",
    "certificates.k8s.io/ClusterTrustBundle",
    "flowcontrol.apiserver.k8s.io/FlowSchema",
    "flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration",
    "authentication.k8s.io/TokenReview",
    "authentication.k8s.io/SelfSubjectReview",
    "authorization.k8s.io/SubjectAccessReview",
    "authorization.k8s.io/SelfSubjectAccessReview",
    "authorization.k8s.io/SelfSubjectRulesReview",
    "resource.k8s.io/DeviceClass",
    "templates.gatekeeper.sh/ConstraintTemplate",
    "mutations.gatekeeper.sh/Assign",
    "mutations.gatekeeper.sh/AssignMetadata",
    "mutations.gatekeeper.sh/ModifySet",
    "mutations.gatekeeper.sh/AssignImage",
    "expansion.gatekeeper.sh/ExpansionTemplate",
    "cert-manager.io/ClusterIssuer",
]);

/** Namespace Kubernetes (and Pulumi's provider) puts a namespaced object in when it names none. */
export const DEFAULT_NAMESPACE = "default";

export type ScopePredicate = (group: string, kind: string) => boolean;

export const defaultIsClusterScoped: ScopePredicate = (group, kind) =>
    CLUSTER_SCOPED_KINDS.has(`${group}/${kind}`) || group === "constraints.gatekeeper.sh";

export function isNamespaceObject(group: string, kind: string): boolean {
    return kind === "Namespace" && group === "";
}

/**
 * The namespace an object lives in: its own metadata.namespace, else `default` for namespaced
 * kinds (as the API server would place it), else undefined for cluster-scoped kinds.
 */
export function effectiveNamespace(obj: K8sObject, isClusterScoped: ScopePredicate = defaultIsClusterScoped): string | undefined {
    const declared = obj.metadata?.namespace;
    if (declared) return declared;
    const { group } = parseApiVersion(obj.apiVersion);
    if (isClusterScoped(group, obj.kind ?? "")) return undefined;
    return DEFAULT_NAMESPACE;
}

/**
 * The scope predicate with the stack's own CustomResourceDefinitions: a kind a CRD of the objects
 * declares `scope: Cluster` is cluster-scoped (its objects go to data.inventory.cluster, as
 * Gatekeeper syncs them), one it declares Namespaced is not; other kinds as `base` says.
 */
export function withDeclaredScopes(objects: readonly K8sObject[], base: ScopePredicate): ScopePredicate {
    let declared: Map<string, boolean> | undefined;
    for (const o of objects) {
        if (o?.kind !== "CustomResourceDefinition" || !String(o.apiVersion ?? "").startsWith("apiextensions.k8s.io/")) continue;
        const group = o.spec?.group;
        const kind = o.spec?.names?.kind;
        const scope = o.spec?.scope;
        if (typeof group !== "string" || typeof kind !== "string" || (scope !== "Cluster" && scope !== "Namespaced")) continue;
        (declared ??= new Map()).set(`${group}/${kind}`, scope === "Cluster");
    }
    if (declared === undefined) return base;
    const scopes = declared;
    return (group, kind) => scopes.get(`${group}/${kind}`) ?? base(group, kind);
}
