import type { Inventory, TemplateRule } from "../types";
import { violations } from "./lib/pod";

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
        const messages: string[] = [];
        if (existing.length === 0) {
            messages.push(
                "StorageClasses not synced. Gatekeeper may be misconfigured. Please have a cluster-admin consult the documentation.",
            );
        }
        const allowed = parameters.allowedStorageClasses;
        const usable = allowed ? existing.filter((n) => allowed.includes(n)) : existing;
        // includeStorageClassesInMessage defaults to true (schema default, applied when loading the constraint).
        const choices = parameters.includeStorageClassesInMessage === false ? "" : ` Must be one of [${usable.join(", ")}]`;
        const check = (owner: string, storageClassName: unknown) => {
            if (typeof storageClassName === "string" && !usable.includes(storageClassName)) {
                messages.push(`${owner} did not specify a valid storage class name <${storageClassName}>.${choices}`);
            }
            if (!storageClassName) messages.push(`${owner} did not specify a storage class name.${choices}`);
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
