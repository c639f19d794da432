import type { Inventory, K8sObject } from "../types";
import type { SyncKind } from "./constraints";
import { parseApiVersion } from "./gvk";
import { defaultIsClusterScoped, effectiveNamespace, type ScopePredicate } from "./scope";

/** Label the API server sets on every Namespace (Kubernetes >= 1.21). */
export const NAMESPACE_NAME_LABEL = "kubernetes.io/metadata.name";

export interface StackInventory extends Inventory {
    /** Labels of a namespace: those declared in the stack plus kubernetes.io/metadata.name. */
    namespaceLabels(namespace: string): Record<string, string>;
    /** Whether the stack's objects include the Namespace of that name. */
    namespaceDeclared(namespace: string): boolean;
}

interface Entry {
    obj: K8sObject;
    group: string;
    namespace: string | undefined;
}

/**
 * Gatekeeper's data.inventory built from the objects of a stack. Objects without a namespace
 * count as in `default` unless their kind is cluster-scoped. Lists are cached and shared:
 * callers must not modify them.
 */
export function buildInventory(
    objects: readonly K8sObject[],
    isClusterScoped: ScopePredicate = defaultIsClusterScoped,
    syncOnly: readonly SyncKind[] = [],
): StackInventory {
    const byKind = new Map<string, Entry[]>();
    const namespaceLabelsByName = new Map<string, Record<string, string>>();
    for (const obj of objects) {
        if (!obj || typeof obj !== "object" || !obj.kind) continue;
        const { group } = parseApiVersion(obj.apiVersion);
        const entry = { obj, group, namespace: effectiveNamespace(obj, isClusterScoped) };
        let list = byKind.get(obj.kind);
        if (!list) byKind.set(obj.kind, (list = []));
        list.push(entry);
        if (obj.kind === "Namespace" && group === "" && obj.metadata?.name) {
            const name = obj.metadata.name;
            namespaceLabelsByName.set(name, { ...(obj.metadata.labels ?? {}), [NAMESPACE_NAME_LABEL]: name });
        }
    }
    const declared = new Set(namespaceLabelsByName.keys());
    const cache = new Map<string, K8sObject[]>();
    const empty: K8sObject[] = [];
    let data: Record<string, unknown> | undefined;
    return {
        gatekeeperData() {
            data ??= gatekeeperLayout(byKind, syncOnly);
            return data;
        },
        list(kind, opts) {
            const entries = byKind.get(kind);
            if (!entries) return empty;
            const group = opts?.group;
            const namespace = opts?.namespace;
            const key = `${kind}\u0000${group ?? "\u0001"}\u0000${namespace ?? "\u0001"}`;
            let result = cache.get(key);
            if (!result) {
                result = entries
                    .filter((e) => (group === undefined || e.group === group) && (namespace === undefined || e.namespace === namespace))
                    .map((e) => e.obj);
                cache.set(key, result);
            }
            return result;
        },
        namespaceDeclared: (namespace) => declared.has(namespace),
        namespaceLabels(namespace) {
            let labels = namespaceLabelsByName.get(namespace);
            if (!labels) {
                labels = { [NAMESPACE_NAME_LABEL]: namespace };
                namespaceLabelsByName.set(namespace, labels);
            }
            return labels;
        },
    };
}

/**
 * Gatekeeper's sync layout of data.inventory, for the kinds Config's syncOnly lists: made from
 * the objects of those kinds only (an object later in the stack with the same path replaces an
 * earlier one, as before; the order of keys is not Rego's, which sorts them).
 */
function gatekeeperLayout(byKind: ReadonlyMap<string, readonly Entry[]>, syncOnly: readonly SyncKind[]): Record<string, unknown> {
    const cluster: Record<string, any> = {};
    const namespace: Record<string, any> = {};
    for (const kind of new Set(syncOnly.map((s) => s.kind))) {
        const synced = new Set(syncOnly.filter((s) => s.kind === kind).map((s) => `${s.group}/${s.version}`));
        for (const { obj, namespace: ns } of byKind.get(kind) ?? []) {
            if (typeof obj.apiVersion !== "string") continue;
            const { group, version } = parseApiVersion(obj.apiVersion);
            if (!synced.has(`${group}/${version}`)) continue;
            const name = obj.metadata?.name;
            if (typeof name !== "string") continue;
            const root = ns === undefined ? cluster : (namespace[ns] ??= {});
            ((root[obj.apiVersion] ??= {})[kind] ??= {})[name] = obj;
        }
    }
    return { cluster, namespace };
}
