import type { TemplateRule } from "../types";

export type Params = Record<string, never>;

const ROLE_NAME = "system:aggregate-to-edit";
const EDIT_VERBS = new Set(["create", "patch", "update", "*"]);

interface PolicyRule {
    resources?: string[];
    verbs?: string[];
}

export const rule: TemplateRule<Params> = {
    kind: "K8sBlockEndpointEditDefaultRole",
    template: "block-endpoint-edit-default-role",
    category: "general",
    description: "Many Kubernetes installations by default have a system:aggregate-to-edit ClusterRole which does not properly restrict access to editing Endpoints. This ConstraintTemplate forbids the system:aggregate-to-edit ClusterRole from granting permission to create/patch/update Endpoints.\nClusterRole/system:aggregate-to-edit should not allow Endpoint edit permissions due to CVE-2021-25740, Endpoint & EndpointSlice permissions allow cross-Namespace forwarding, https://github.com/kubernetes/kubernetes/issues/103675",
    parameterSchema: null,
    validate({ review }) {
        const role = review.object;
        if (role.metadata?.name !== ROLE_NAME) return [];
        const rules: PolicyRule[] = Array.isArray(role.rules) ? role.rules : [];
        if (!rules.some(grantsEndpointEdit)) return [];
        return [
            {
                msg:
                    "ClusterRole system:aggregate-to-edit should not allow endpoint edit permissions. For k8s version < 1.22, " +
                    "the Cluster Role should be annotated with rbac.authorization.kubernetes.io/autoupdate=false to prevent " +
                    "autoreconciliation back to default permissions for this role.",
            },
        ];
    },
};

function grantsEndpointEdit(r: PolicyRule | null): boolean {
    const resources = r?.resources ?? [];
    const verbs = r?.verbs ?? [];
    return (
        (resources.includes("endpoints") || resources.includes("*")) && verbs.some((v) => EDIT_VERBS.has(v))
    );
}
