import { RegoEvalError, type TemplateRule } from "../types";
import { type Container, checkedContainers, violations, rego, regoCompare } from "./lib/pod";

export interface Params {
    exemptImages?: string[];
}

const PROBES = ["livenessProbe", "readinessProbe", "startupProbe"] as const;
const HOOKS = ["postStart", "preStop"] as const;
const ACTIONS = ["httpGet", "tcpSocket"] as const;

/**
 * The library's get_probe(c) and get_lifecycle_hook(c) are Rego functions with one definition per
 * probe (lines 46, 50, 54 of its Rego) and per hook (58, 62). When a container has two of them with
 * different values (a livenessProbe and a different readinessProbe, which most containers with
 * probes have), OPA stops with eval_conflict_error at the definition whose value differs from the
 * first, and Gatekeeper reports that error as the violation (types.ts RegoEvalError). The probe
 * rules run first, over the containers in Rego's set order; then the hook rules.
 */
const PROBE_LINES: ReadonlyArray<readonly [(typeof PROBES)[number], number]> = [["livenessProbe", 46], ["readinessProbe", 50], ["startupProbe", 54]];
const HOOK_LINES: ReadonlyArray<readonly [(typeof HOOKS)[number], number]> = [["postStart", 58], ["preStop", 62]];

function conflictLine(values: ReadonlyArray<readonly [unknown, number]>): number | undefined {
    let previous: unknown;
    for (const [value, line] of values) {
        if (value === undefined) continue;
        if (previous !== undefined && regoCompare(previous, value) !== 0) return line;
        previous = value;
    }
    return undefined;
}

function evaluationConflict(containers: readonly Container[]): string | undefined {
    const ordered = [...containers].sort(regoCompare);
    const probeLines = ordered.map((c) => conflictLine(PROBE_LINES.map(([probe, line]) => [c[probe], line])));
    const hookLines = ordered.map((c) => conflictLine(HOOK_LINES.map(([hook, line]) => [c.lifecycle?.[hook], line])));
    const line = probeLines.find((l) => l !== undefined) ?? hookLines.find((l) => l !== undefined);
    return line === undefined ? undefined : `template:${line}: eval_conflict_error: functions must not produce multiple outputs for same inputs`;
}

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
        const checked = checkedContainers(review.object, parameters?.exemptImages).map((c) => c.container);
        const conflict = evaluationConflict(checked);
        if (conflict !== undefined) throw new RegoEvalError(conflict);
        for (const container of checked) checkContainer(container, messages);
        return violations(messages);
    },
};
