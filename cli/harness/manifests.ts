/**
 * From registered resources to reviewable files: Kubernetes objects (sorted by kind, namespace,
 * name) and the resource list, with every secret value replaced by REDACTED.
 */
import { portableYaml } from "../../components/lib/yaml";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { isSecretValue, unwrapSecrets } from "../../policies/pack/resources";
import { redactSecretShapes, secretShapeIn } from "../../policies/pack/secretPatterns";
import { RegisteredResource } from "./program";

export { unwrapSecrets };

export const REDACTED = "<redacted: secret>";

/**
 * Resource types of @pulumi/kubernetes that are not single Kubernetes objects; a patch resource
 * (`<Kind>Patch`) is a partial apply to an object something else made (components/lib/claimGrowth.ts).
 */
const NOT_OBJECTS = /^kubernetes:(helm\.sh\/v\d+:(Chart|Release)|yaml(\/v2)?:(ConfigFile|ConfigGroup)|kustomize(\/v2)?:Directory)$|^kubernetes:[^:]+:\w+Patch$|^pulumi:providers:/;

export const isKubernetesObject = (r: RegisteredResource) => r.custom && r.type.startsWith("kubernetes:") && !NOT_OBJECTS.test(r.type);

/**
 * Replaces every secret-marked value (and every value of a Secret's data) with REDACTED, and every
 * secret-shaped part of a plain string (an API key, a private key, a long high-entropy token) with
 * SECRET_SHAPE_REDACTED, whatever key holds it (plainTextSecrets makes the render fail on those).
 */
export function redact(value: unknown): unknown {
    if (isSecretValue(value)) return REDACTED;
    if (typeof value === "string") return redactSecretShapes(value);
    if (Array.isArray(value)) return value.map(redact);
    if (value && typeof value === "object") {
        return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, redact(v)]));
    }
    return value;
}

function redactObject(o: K8sObject): K8sObject {
    const out = redact(o) as K8sObject;
    if (o.kind === "Secret" && o.apiVersion === "v1") {
        // Every value of a Secret is secret, marked or not; keep the key names for review.
        for (const field of ["data", "stringData"]) {
            const plain = unwrapSecrets(o[field]);
            if (plain && typeof plain === "object") out[field] = Object.fromEntries(Object.keys(plain).map((k) => [k, REDACTED]));
        }
    }
    return canonical(out);
}

const FIRST = ["apiVersion", "kind", "metadata"];

/** Keys sorted at every level, with apiVersion, kind and metadata first: byte-stable output. */
export function canonical<T>(value: T, top = true): T {
    if (Array.isArray(value)) return value.map((v) => canonical(v, false)) as T;
    if (!value || typeof value !== "object") return value;
    const keys = Object.keys(value).sort((a, b) => {
        const ia = top ? FIRST.indexOf(a) : -1;
        const ib = top ? FIRST.indexOf(b) : -1;
        if (ia !== -1 || ib !== -1) return (ia === -1 ? 99 : ia) - (ib === -1 ? 99 : ib);
        return a < b ? -1 : a > b ? 1 : 0;
    });
    return Object.fromEntries(keys.map((k) => [k, canonical((value as Record<string, unknown>)[k], false)])) as T;
}

const sortKey = (o: K8sObject) => [o.kind ?? "", o.metadata?.namespace ?? "", o.metadata?.name ?? ""];

export function compareObjects(a: K8sObject, b: K8sObject): number {
    const ka = sortKey(a);
    const kb = sortKey(b);
    for (let i = 0; i < ka.length; i++) if (ka[i] !== kb[i]) return ka[i] < kb[i] ? -1 : 1;
    return 0;
}

export interface Extracted {
    /** Objects with secret values in place (for checks, never written). */
    objects: K8sObject[];
    /** The same objects, redacted, sorted. */
    redacted: K8sObject[];
    duplicates: string[];
}

export function kubernetesObjects(resources: RegisteredResource[]): Extracted {
    const objects = resources.filter(isKubernetesObject).map((r) => unwrapSecrets(r.inputs) as K8sObject).sort(compareObjects);
    const duplicates: string[] = [];
    for (let i = 1; i < objects.length; i++) {
        const a = objects[i - 1];
        const b = objects[i];
        if (compareObjects(a, b) === 0 && (a.apiVersion?.split("/")[0] ?? "") === (b.apiVersion?.split("/")[0] ?? ""))
            duplicates.push(`${b.kind} ${b.metadata?.namespace ?? "(cluster)"}/${b.metadata?.name} is declared twice`);
    }
    const redacted = resources.filter(isKubernetesObject).map((r) => redactObject(r.inputs as K8sObject)).sort(compareObjects);
    return { objects, redacted, duplicates };
}

/**
 * Where a registered resource holds a secret-shaped value in plain text (not marked secret):
 * `<type> <name>: <path> holds <shape>`, the value itself never named.
 */
export function plainTextSecrets(resources: RegisteredResource[]): string[] {
    const found: string[] = [];
    const walk = (v: unknown, p: string, r: RegisteredResource) => {
        if (isSecretValue(v)) return;
        if (typeof v === "string") {
            const shape = secretShapeIn(v);
            if (shape) found.push(`${r.type} ${r.name}: ${p || "(value)"} holds ${shape} in plain text (redacted in the output); give it through a secret config key (pulumi config set --secret) or remove it`);
        } else if (Array.isArray(v)) v.forEach((item, i) => walk(item, `${p}[${i}]`, r));
        else if (v && typeof v === "object") for (const [k, item] of Object.entries(v)) walk(item, p ? `${p}.${k}` : k, r);
    };
    for (const r of resources) walk(r.inputs, "", r);
    return found;
}

export function manifestsYaml(redacted: K8sObject[]): string {
    return redacted.map((o) => portableYaml(o)).join("---\n");
}

export interface ResourceRecord {
    type: string;
    name: string;
    parent?: string;
    urn: string;
    inputs: unknown;
}

export function resourceRecords(resources: RegisteredResource[]): ResourceRecord[] {
    return resources
        .map((r) => ({ type: r.type, name: r.name, urn: r.urn, parent: r.parent, inputs: canonical(isKubernetesObject(r) ? redactObject(r.inputs as K8sObject) : redact(r.inputs), false) }))
        .sort((a, b) => (a.urn < b.urn ? -1 : a.urn > b.urn ? 1 : 0));
}
