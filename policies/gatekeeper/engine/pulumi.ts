import type { K8sObject } from "../types";

/** Pulumi Kubernetes types that are not Kubernetes objects themselves (they render others). */
const NON_OBJECT_GROUPS = new Set(["helm.sh", "yaml", "kustomize"]);

/**
 * The Kubernetes object behind a Pulumi resource of type "kubernetes:<group>/<version>:<Kind>"
 * ("core" is the core group), or undefined for other resource types. apiVersion and kind are
 * filled in from the type when the props lack them; props are otherwise used as they are.
 * A patch resource (`<Kind>Patch`, e.g. the claim patches of components/lib/claimGrowth.ts) is a
 * partial apply to an object something else made, not an object of the stack: undefined.
 */
export function k8sObjectFromPulumi(type: string, props: Record<string, any> | undefined): K8sObject | undefined {
    if (!type.startsWith("kubernetes:")) return undefined;
    const [, module, kind] = type.split(":");
    if (!module || !kind || kind.endsWith("Patch")) return undefined;
    const slash = module.indexOf("/");
    if (slash < 0) return undefined;
    const group = module.slice(0, slash);
    if (NON_OBJECT_GROUPS.has(group) || group.startsWith("yaml")) return undefined;
    const apiVersion = group === "core" ? module.slice(slash + 1) : module;
    const obj = (props ?? {}) as K8sObject;
    if (obj.apiVersion && obj.kind) return obj;
    return { ...obj, apiVersion: obj.apiVersion ?? apiVersion, kind: obj.kind ?? kind };
}
