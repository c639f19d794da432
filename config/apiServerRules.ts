/**
 * Cross-key rules for values the Kubernetes API server refuses or that break the cluster
 * (registered in config/rules.ts): the namespaces the stack owns are never the cluster's own and
 * an application never shares an add-on's, every public host fits DNS (a label at most 63
 * characters, the name at most 253), and a container limit is never zero.
 */
import type { Config, ConfigProblem, Rule } from "./rule";
import { isDns1123Label, SYSTEM_NAMESPACES } from "./kubernetesNames";
import { cpuMillis, keyOf, quantityBytes } from "./schema";

/** The namespaces of the applications, by key: each gets the stack's guardrails (components/namespaces.ts). */
export function applicationNamespaces(c: Config): Array<[string, string]> {
    return [
        ["agentServerNamespace", c.agentServer.namespace],
        ["dataStoresNamespace", c.dataStores.namespace],
        ["workflowNamespace", c.workflow.namespace],
        ["bookingNamespace", c.booking.namespace],
        ["searchEngineNamespace", c.searchEngine.namespace],
        ["columnStoreNamespace", c.columnStore.namespace],
        ["gitopsUptimeMonitorNamespace", c.gitops.uptimeMonitor.namespace],
        ["gitopsChatUiNamespace", c.gitops.chatUi.namespace],
        ["gitopsDashboardNamespace", c.gitops.dashboard.namespace],
    ];
}

/** The namespaces of the ingress controller and the add-ons, by key. */
export function addonNamespaces(c: Config): Array<[string, string]> {
    return [
        ["ingressControllerNamespace", c.ingress.controllerNamespace],
        ["addonsCertManagerNamespace", c.addons.certManager.namespace],
        ["addonsReloaderNamespace", c.addons.reloader.namespace],
        ["addonsMetricsServerNamespace", c.addons.metricsServer.namespace],
        ["addonsVpaNamespace", c.addons.vpa.namespace],
        ["addonsArgoCdNamespace", c.addons.argoCd.namespace],
        ["addonsMonitoringNamespace", c.addons.monitoring.namespace],
    ];
}

/** Every namespace the stack creates and owns: a default-deny policy in it, and `pulumi destroy` deletes it. */
export const ownedNamespaces = (c: Config): string[] => [...applicationNamespaces(c), ...addonNamespaces(c)].map(([, ns]) => ns);

const SYSTEM = SYSTEM_NAMESPACES as readonly string[];
const systemProblem = (key: string, ns: string, what: string): ConfigProblem => ({
    key,
    problem: `"${ns}" is a namespace of the cluster itself (${what})`,
    expected: `a namespace of the stack's own, not one of ${SYSTEM.join(", ")}`,
});

const namespaces: Rule = (c) => {
    const out: ConfigProblem[] = [];
    const addons = addonNamespaces(c);
    for (const [key, ns] of [...applicationNamespaces(c), ...addons])
        if (SYSTEM.includes(ns)) out.push(systemProblem(key, ns, "the stack would own it: a default-deny network policy in it, and `pulumi destroy` would delete it"));
    for (const [key, ns] of applicationNamespaces(c)) {
        const addon = addons.find(([, a]) => a === ns);
        if (addon && !SYSTEM.includes(ns))
            out.push({ key, problem: `"${ns}" is the namespace of an add-on (${addon[0]})`, expected: "a namespace of the application's own (it gets its own guardrails and network policies)" });
    }
    c.workflow.rbacNamespaces.forEach((ns) => {
        if (SYSTEM.includes(ns)) out.push(systemProblem("workflowRbacNamespaces", ns, "the workflow tool would be allowed to patch its deployments"));
    });
    return out;
};

/** Every public host: <label>.<domain>, the agent server's further instances <label>-<port>.<domain> (components/agentServer.ts). */
function publicHosts(c: Config): Array<[string, string]> {
    const a = c.agentServer;
    return [
        ...a.ports.map((port, i): [string, string] => ["agentServerHostLabel", i === 0 ? a.hostLabel : `${a.hostLabel}-${port}`]),
        ["bridgeHost", c.bridge.host],
        ["bookingHost", c.booking.host],
        ["searchEngineHost", c.searchEngine.host],
        ["workflowEditorHost", c.workflow.editorHost],
        ["workflowWebhookHost", c.workflow.webhookHost],
        ["gitopsUptimeMonitorHostLabel", c.gitops.uptimeMonitor.hostLabel],
        ["gitopsChatUiHostLabel", c.gitops.chatUi.hostLabel],
        ["gitopsDashboardHostLabel", c.gitops.dashboard.hostLabel],
    ];
}

const hosts: Rule = (c) => {
    const out: ConfigProblem[] = [];
    for (const [key, label] of publicHosts(c)) {
        if (!isDns1123Label(label) && label.length > 63)
            out.push({ key, problem: `the host label "${label}" is longer than 63 characters`, expected: `a host label short enough that every host built from it is a DNS label (the agent server's further instances append -<port>)` });
        const host = `${label}.${c.environment.domain}`;
        if (host.length > 253)
            out.push({ key: "environmentDomain", problem: `the host ${host.slice(0, 40)}... (from ${key}) is longer than 253 characters`, expected: "a domain short enough that <label>.<domain> has at most 253 characters" });
    }
    return out.filter((p, i) => out.findIndex((q) => q.key === p.key && q.problem === p.problem) === i);
};

/** A zero cpu or memory limit: the container cannot start (or is throttled to nothing). */
const limitsAboveZero: Rule = (c) => {
    const out: ConfigProblem[] = [];
    const walk = (node: any, path: string[]) => {
        if (!node || typeof node !== "object" || Array.isArray(node)) return;
        if (path[path.length - 1] === "limits" || path[path.length - 1] === "containerLimits") {
            if (typeof node.cpu === "string" && cpuMillis(node.cpu) <= 0)
                out.push({ key: keyOf([...path, "cpu"]), problem: `${node.cpu} is no cpu at all`, expected: "a cpu limit above 0, such as \"500m\"" });
            if (typeof node.memory === "string" && quantityBytes(node.memory) <= 0)
                out.push({ key: keyOf([...path, "memory"]), problem: `${node.memory} is no memory at all`, expected: "a memory limit above 0, such as \"256Mi\"" });
        }
        for (const [k, v] of Object.entries(node)) walk(v, [...path, k]);
    };
    walk(c, []);
    const l = c.guardrails.limitRange;
    const q = c.guardrails.quota;
    for (const [key, v] of [["guardrailsLimitRangeDefaultCpu", l.defaultCpu], ["guardrailsQuotaLimitsCpu", q.limitsCpu], ["guardrailsQuotaRequestsCpu", q.requestsCpu]] as const)
        if (cpuMillis(v) <= 0) out.push({ key, problem: `${v} is no cpu at all`, expected: "a cpu quantity above 0 (with 0 no container of the namespace can start)" });
    for (const [key, v] of [["guardrailsLimitRangeDefaultMemory", l.defaultMemory], ["guardrailsQuotaLimitsMemory", q.limitsMemory], ["guardrailsQuotaRequestsMemory", q.requestsMemory]] as const)
        if (quantityBytes(v) <= 0) out.push({ key, problem: `${v} is no memory at all`, expected: "a memory quantity above 0 (with 0 no container of the namespace can start)" });
    return out;
};

/** The autoscalers' minimum: the API server refuses minReplicas 0 unless its alpha feature gate HPAScaleToZero is on. */
const autoscalerMinimums: Rule = (c) =>
    ([["bridgeMinReplicas", c.bridge.minReplicas], ["workflowWorkerReplicas", c.workflow.workerReplicas]] as const)
        .filter(([, n]) => n < 1)
        .map(([key, n]) => ({ key, problem: `${n} is the minReplicas of a HorizontalPodAutoscaler, which the API server refuses (scale to zero needs the alpha feature gate HPAScaleToZero)`, expected: "at least 1" }));

export const API_SERVER_RULES: Rule[] = [namespaces, hosts, limitsAboveZero, autoscalerMinimums];
