import type { K8sObject, TemplateRule } from "../types";
import { allContainers, rego, violations } from "./lib/pod";

export type Params = Record<string, never>;

const TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount";

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPAutomountServiceAccountTokenPod",
    template: "automount-serviceaccount-token",
    category: "general",
    description: "Controls the ability of any Pod to enable automountServiceAccountToken.",
    parameterSchema: {
        "type": "object",
        "description": "Controls the ability of any Pod to enable automountServiceAccountToken."
    },
    validate({ review }) {
        const pod = review.object;
        const spec = pod.spec ?? {};
        if (!mountsServiceAccountToken(spec, pod)) return [];
        return violations([rego`Automounting service account token is disallowed, pod: ${pod.metadata?.name}`]);
    },
};

/**
 * Explicit automountServiceAccountToken: true; or, when the field is absent, a container that
 * mounts the token path itself. Ephemeral containers cannot set volume mounts.
 */
function mountsServiceAccountToken(spec: Record<string, any>, pod: K8sObject): boolean {
    if ("automountServiceAccountToken" in spec && spec.automountServiceAccountToken !== undefined) {
        return spec.automountServiceAccountToken === true;
    }
    return allContainers(pod).some(
        ({ container, kind }) =>
            kind !== "ephemeralContainer" &&
            Array.isArray(container.volumeMounts) &&
            container.volumeMounts.some((m: { mountPath?: string } | null) => m?.mountPath === TOKEN_MOUNT_PATH),
    );
}
