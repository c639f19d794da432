import { containersAndInit, get, lit, present } from "../cel";
import type { AdmissionRule } from "../types";

const TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

/**
 * automountServiceAccountToken: true is refused; when the field is absent, a container (not an
 * ephemeral one) that mounts the token path itself is refused.
 */
export const admission: AdmissionRule<Record<string, never>> = {
    kind: "K8sPSPAutomountServiceAccountTokenPod",
    template: "automount-serviceaccount-token",
    checks: (_p, s) => [{
        expression: `${present(s.o, "spec.automountServiceAccountToken")} ? ${s.o}.spec.automountServiceAccountToken != true : ` +
            `!${containersAndInit(s.o)}.exists(c, ${get("c", "volumeMounts", "[]")}.exists(m, has(m.mountPath) && m.mountPath == ${lit(TOKEN_MOUNT_PATH)}))`,
        message: "automounting the service account token is not allowed (set automountServiceAccountToken: false)",
    }],
};
