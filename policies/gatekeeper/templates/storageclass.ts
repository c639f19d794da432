import type { Inventory, TemplateRule } from "../types";
import { isSet, rego, violations } from "./lib/pod";

export interface Params {
    includeStorageClassesInMessage?: boolean;
    allowedStorageClasses?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sStorageClass",
    template: "storageclass",
    category: "general",
    description: "Requires storage classes to be specified when used. Only Gatekeeper 3.9+ and non-ephemeral containers are supported.",
    parameterSchema: {
        "type": "object",
        "description": "Requires storage classes to be specified when used.",
        "properties": {
            "includeStorageClassesInMessage": {
                "type": "boolean",
                "default": true
            },
            "allowedStorageClasses": {
                "type": "array",
                "description": "An optional allow-list of storage classes.  If specified, any storage class not in the `allowedStorageClasses` parameter is disallowed.",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters, inventory }) {
        const obj = review.object;
        const existing = storageClassNames(inventory);
        const messages: (string | undefined)[] = [];
        if (existing.length === 0) {
            messages.push(
                "StorageClasses not synced. Gatekeeper may be misconfigured. Please have a cluster-admin consult the documentation.",
            );
        }
        // As the library's Rego: a name is allowed when the StorageClass exists and allowedStorageClasses
        // (default ["*"]) holds "*" or the name; the "Must be one of" list is every existing class, or
        // the existing ones that are allowed when allowedStorageClasses is given. A name that is
        // present but not a usable string (null, "", false) is a bad name; only an absent or false
        // name is a missing one (Rego's `not name`).
        const allowed = parameters.allowedStorageClasses;
        const allowedList: unknown[] = Array.isArray(allowed) ? allowed : allowed === undefined ? ["*"] : [];
        const isAllowed = (name: unknown) => typeof name === "string" && existing.includes(name) && (allowedList.includes("*") || allowedList.includes(name));
        const include = isSet(parameters.includeStorageClassesInMessage);
        const badName = (owner: string, name: unknown) => {
            if (!include) return rego`${owner} did not specify a valid storage class name <${name}>.`;
            if (allowed === undefined) return rego`${owner} did not specify a valid storage class name <${name}>. Must be one of [${existing.join(", ")}]`;
            const usable = existing.filter((n) => allowedList.includes(n));
            return rego`${owner} did not specify an allowed and valid storage class name <${name}>. Must be one of [${usable.join(", ")}]`;
        };
        const noName = (owner: string) => (include ? `${owner} did not specify a storage class name. Must be one of [${existing.join(", ")}]` : `${owner} did not specify a storage class name.`);
        const check = (owner: string, name: unknown) => {
            if (name !== undefined && !isAllowed(name)) messages.push(badName(owner, name));
            if (!isSet(name)) messages.push(noName(owner));
        };
        if (obj.apiVersion === "v1" && obj.kind === "PersistentVolumeClaim") {
            check("pvc", obj.spec?.storageClassName);
        }
        if (obj.apiVersion === "apps/v1" && obj.kind === "StatefulSet") {
            const templates: unknown = obj.spec?.volumeClaimTemplates;
            for (const vct of Array.isArray(templates) ? templates : []) check("statefulset", vct?.spec?.storageClassName);
        }
        return violations(messages);
    },
};

function storageClassNames(inventory: Inventory): string[] {
    return inventory
        .list("StorageClass", { group: "storage.k8s.io" })
        .map((sc) => sc.metadata?.name)
        .filter((n): n is string => typeof n === "string")
        .sort();
}
