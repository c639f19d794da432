import type { TemplateRule } from "../types";
import { type Container, checkedContainers, violations, rego } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const HOOKS = ["postStart", "preStop"] as const;
const ACTIONS = ["httpGet", "tcpSocket"] as const;

/** Reports each httpGet/tcpSocket host of a probe or hook that is set to something other than "". */
function reportHosts(handler: any, what: string, containerName: unknown, messages: (string | undefined)[]): void {
    if (!handler || typeof handler !== "object") return;
    for (const action of ACTIONS) {
        const host = handler[action]?.host;
        if (host !== undefined && host !== "") {
            messages.push(rego`Container ${containerName} has ${what} with host field set: ${host}`);
        }
    }
}

function checkContainer(container: Container, messages: (string | undefined)[]): void {
    const name = container.name;
    for (const probe of PROBES) reportHosts(container[probe], "probe", name, messages);
    const lifecycle = container.lifecycle;
    if (lifecycle) for (const hook of HOOKS) reportHosts(lifecycle[hook], "lifecycle hook", name, messages);
}

export const rule: TemplateRule<Params> = {
    kind: "K8sPSPHostProbesLifecycle",
    template: "host-probes-lifecycle",
    category: "pod-security-policy",
    description: "Disallows specifying the host field in probes and lifecycle hooks. The Baseline profile (v1.34+) requires that probes (livenessProbe, readinessProbe, startupProbe) and lifecycle hooks (postStart, preStop) must not specify a host field. This prevents containers from executing network requests to the host node. For more information, see https://kubernetes.io/docs/concepts/security/pod-security-standards/",
    parameterSchema: {
        "type": "object",
        "description": "Disallows specifying the host field in probes and lifecycle hooks. The Baseline profile (v1.34+) requires that probes (livenessProbe, readinessProbe, startupProbe) and lifecycle hooks (postStart, preStop) must not specify a host field. This prevents containers from executing network requests to the host node. For more information, see https://kubernetes.io/docs/concepts/security/pod-security-standards/",
        "properties": {
            "exemptImages": {
                "description": "Any container that uses an image that matches an entry in this list will be excluded from enforcement. Prefix-matching can be signified with `*`. For example: `my-image-*`.\nIt is recommended that users use the fully-qualified Docker image name (e.g. start with a domain name) in order to avoid unexpectedly exempting images from an untrusted repository.",
                "type": "array",
                "items": {
                    "type": "string"
                }
            }
        }
    },
    validate({ review, parameters }) {
        const messages: (string | undefined)[] = [];
        for (const { container } of checkedContainers(review.object, parameters?.exemptImages)) {
            checkContainer(container, messages);
        }
        return violations(messages);
    },
};
