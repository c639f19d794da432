import { get } from "../cel";
import type { AdmissionRule } from "../types";

/** ClusterRole system:aggregate-to-edit grants no create/patch/update on endpoints. */
export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sBlockEndpointEditDefaultRole",
    template: "block-endpoint-edit-default-role",
    checks: (_p, s) => [{
        expression: `${get(s.o, "metadata.name", '""')} != "system:aggregate-to-edit" || !${get(s.o, "rules", "[]")}.exists(r, ` +
            `(${get("r", "resources", "[]")}.exists(x, x == "endpoints" || x == "*")) && ${get("r", "verbs", "[]")}.exists(v, v in ["create", "patch", "update", "*"]))`,
        message: "ClusterRole system:aggregate-to-edit should not allow endpoint edit permissions",
    }],
};
