/**
 * Which changed objects `pulumi up` replaces (deletes and creates again) instead of updating in
 * place: the kubernetes provider's own rule, transcribed from pulumi-kubernetes v4.25.0 (the
 * version package.json pins), provider/v4/pkg/provider/diff.go `forceNewProperties` and
 * provider.go Diff: a change at or under one of these fields of the object's kind (by API group
 * and version) is a replacement; `.metadata.name` and `.metadata.namespace` replace every kind;
 * ConfigMap `.data`/`.binaryData` and Secret `.type`/`.stringData`/`.data` replace as long as the
 * provider's enableConfigMapMutable / enableSecretMutable are off (their default; the program
 * does not set them). Fields the API server treats as immutable (a StatefulSet's
 * volumeClaimTemplates, a Job's template, a Deployment's selector, a Service's clusterIP) are
 * among them, which is why the provider replaces instead of failing the update.
 *
 * Secret values are redacted on both sides of the diff, so a change of a Secret's value alone is
 * not seen here (the preview shows it).
 */
import type { ChangedObject, FieldChange, ObjectRef } from "./objects";
import { quantityBytes } from "../../config/schema";

export interface Replacement extends ObjectRef {
    /** The changed fields that force the replacement, as the diff names them. */
    fields: string[];
}

const selector = (p: string) => [p, `${p}.matchExpressions`, `${p}.matchLabels`];
const container = (...prefixes: string[]) =>
    prefixes.flatMap((p) => ["args", "command", "env", "image", "imagePullPolicy", "lifecycle", "livenessProbe", "ports", "readinessProbe", "resources", "securityContext", "stdin", "stdinOnce", "terminationMessagePath", "terminationMessagePolicy", "tty", "volumeDevices", "volumeMounts", "workingDir"].map((f) => `${p}.${f}`));

const statefulSet = ["spec.podManagementPolicy", "spec.revisionHistoryLimit", "spec.serviceName", "spec.volumeClaimTemplates", ...selector("spec.selector")];
const deployment = selector("spec.selector");
const job = ["spec.completions", "spec.parallelism", "spec.template", ...selector("spec.selector")];
const roleBinding = ["roleRef"];
const core: Record<string, string[]> = {
    PersistentVolume: ["awsElasticBlockStore", "azureDisk", "azureFile", "cephfs", "cinder", "csi", "fc", "flexVolume", "flocker", "gcePersistentDisk", "glusterfs", "hostPath", "iscsi", "local", "nfs", "photonPersistentDisk", "portworxVolume", "quobyte", "rbd", "scaleIO", "storageos", "vsphereVolume"].map((f) => `spec.${f}`),
    PersistentVolumeClaim: ["spec.accessModes", "spec.storageClassName", "spec.volumeName", ...selector("spec.selector")],
    Pod: [
        ...["affinity", "automountServiceAccountToken", "dnsConfig", "dnsPolicy", "enableServiceLinks", "hostAliases", "hostIPC", "hostNetwork", "hostPID", "hostname", "imagePullSecrets", "nodeName", "nodeSelector", "overhead", "preemptionPolicy", "priority", "priorityClassName", "readinessGates", "restartPolicy", "runtimeClassName", "schedulerName", "securityContext", "serviceAccount", "serviceAccountName", "shareProcessNamespace", "subdomain", "terminationGracePeriodSeconds", "volumes"].map((f) => `spec.${f}`),
        ...container("spec.containers[*]", "spec.initContainers[*]"),
    ],
    ResourceQuota: ["spec.scopes"],
    Secret: ["type", "stringData", "data"],
    ConfigMap: ["data", "binaryData"],
    Service: ["spec.clusterIP"],
};

/** "group/version" -> kind -> force-new fields. */
const FORCE_NEW: Record<string, Record<string, string[]>> = {
    "apps/v1": { DaemonSet: deployment, Deployment: deployment, StatefulSet: statefulSet },
    "apps/v1beta2": { DaemonSet: deployment, Deployment: deployment, StatefulSet: statefulSet },
    "apps/v1beta1": { StatefulSet: statefulSet },
    v1: core,
    "policy/v1beta1": { PodDisruptionBudget: ["spec"] },
    "rbac.authorization.k8s.io/v1": { ClusterRoleBinding: roleBinding, RoleBinding: roleBinding },
    "storage.k8s.io/v1": { StorageClass: ["parameters", "provisioner"] },
    "batch/v1": { Job: job },
};

/** A diff path split into segments: `[name=x]`/`[0]` become `[*]`, a quoted key (`data["a.b"]`) one segment. */
function normalize(path: string): string[] {
    return path
        .replace(/\[name=[^\]]*\]|\[\d+\]/g, "[*]")
        .replace(/\["[^"]*"\]/g, ".<key>")
        .split(".");
}

function under(path: string, field: string): boolean {
    const bare = (seg: string) => seg.replace(/\[\*\]/g, "");
    const p = normalize(path).map(bare);
    const f = field.split(".").map(bare);
    return f.length <= p.length && f.every((seg, i) => seg === p[i]);
}

export function forceNewFields(ref: ObjectRef): string[] {
    return ["metadata.name", "metadata.namespace", ...(FORCE_NEW[ref.apiVersion]?.[ref.kind] ?? [])];
}

const CLAIM_TEMPLATE_SIZE = /^spec\.volumeClaimTemplates\[[^\]]*\]\.spec\.resources\.requests\.storage$/;

/**
 * A StatefulSet's claim template size written another way but equal ("5Gi", "5368709120"): the
 * program registers the deployed spelling (components/lib/claimGuard.ts), so the provider sees no change.
 */
function sameClaimSize(c: ChangedObject, ch: FieldChange): boolean {
    if (c.kind !== "StatefulSet" || ch.type !== "value" || !CLAIM_TEMPLATE_SIZE.test(ch.path) || typeof ch.old !== "string" || typeof ch.new !== "string") return false;
    try {
        return quantityBytes(ch.old) === quantityBytes(ch.new);
    } catch {
        return false;
    }
}

/** The changed objects the provider replaces, each with the fields that force it. */
export function findReplacements(changed: readonly ChangedObject[]): Replacement[] {
    const out: Replacement[] = [];
    for (const c of changed) {
        const force = forceNewFields(c);
        const fields = c.changes.filter((ch: FieldChange) => force.some((f) => under(ch.path, f)) && !sameClaimSize(c, ch)).map((ch) => ch.path);
        if (fields.length > 0) {
            const { changes: _changes, ...ref } = c;
            out.push({ ...ref, fields });
        }
    }
    return out;
}
