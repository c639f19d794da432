import type { TemplateRule } from "../types";
import { isSet, violations, rego } from "./lib/pod";

export type Params = Record<string, never>;

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPHostNamespace",
    template: "host-namespaces",
    category: "pod-security-policy",
    description: "Disallows sharing of host PID and IPC namespaces by pod containers. Corresponds to the `hostPID` and `hostIPC` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#host-namespaces",
    parameterSchema: {
        "type": "object",
        "description": "Disallows sharing of host PID and IPC namespaces by pod containers. Corresponds to the `hostPID` and `hostIPC` fields in a PodSecurityPolicy. For more information, see https://kubernetes.io/docs/concepts/policy/pod-security-policy/#host-namespaces"
    },
    validate({ review }) {
        const pod = review.object;
        if (!isSet(pod.spec?.hostPID) && !isSet(pod.spec?.hostIPC)) return [];
        return violations([rego`Sharing the host namespace is not allowed: ${pod.metadata?.name}`]);
    },
};
