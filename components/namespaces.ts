/**
 * The namespaces of the environment, one per area, each with its guardrails (sections 2.1, 2.5):
 * a LimitRange (defaults for containers that set no resources), a ResourceQuota, a default-deny
 * NetworkPolicy for both directions, and the allowances every pod needs: cluster DNS, and the
 * ACME http01 solver pods cert-manager starts next to an Ingress.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config";
import { parseQuotaOverride, QUOTA_RESOURCES } from "../config/platformRules";
import { clusterDns, DNS_PORTS, ingressController } from "./lib/network";
import { environmentLabels } from "./lib/labels";

export interface NamespacesArgs {
    config: StackConfig;
    /** Every namespace of the environment, named by index.ts from the areas' configuration. */
    names: readonly string[];
}

/** The label cert-manager puts on its ACME http01 solver pods, and the port they listen on. */
export const ACME_SOLVER = { label: "acme.cert-manager.io/http01-solver", port: 8089 } as const;

export type QuotaHard = Record<(typeof QUOTA_RESOURCES)[number], string>;

/** The quota of one namespace: the stack's default, raised by guardrailsQuotaOverrides. */
export function quotaFor(cfg: StackConfig, namespace: string): QuotaHard {
    const q = cfg.guardrails.quota;
    const hard: QuotaHard = {
        "requests.cpu": q.requestsCpu,
        "requests.memory": q.requestsMemory,
        "limits.cpu": q.limitsCpu,
        "limits.memory": q.limitsMemory,
        "requests.storage": q.requestsStorage,
        persistentvolumeclaims: String(q.persistentVolumeClaims),
        pods: String(q.pods),
    };
    for (const entry of cfg.guardrails.quotaOverrides) {
        const o = parseQuotaOverride(entry);
        if (typeof o !== "string" && o.namespace === namespace) hard[o.resource] = o.quantity;
    }
    return hard;
}

export class Namespaces extends pulumi.ComponentResource {
    public readonly names: string[];
    private readonly byName = new Map<string, k8s.core.v1.Namespace>();
    private readonly guardrailsByName = new Map<string, pulumi.Resource[]>();

    constructor(name: string, args: NamespacesArgs, opts?: pulumi.ComponentResourceOptions) {
        // Checked before anything is registered, so a bad value leaves nothing half-created.
        const names = [...new Set(args.names)].sort();
        const unknown = args.config.guardrails.quotaOverrides
            .map(parseQuotaOverride)
            .filter((o): o is Exclude<ReturnType<typeof parseQuotaOverride>, string> => typeof o !== "string" && !names.includes(o.namespace));
        if (unknown.length > 0)
            throw new Error(`guardrailsQuotaOverrides names namespaces that do not exist: ${unknown.map((o) => o.namespace).join(", ")}; expected one of ${names.join(", ")}`);
        super("ops:platform:Namespaces", name, {}, opts);
        const cfg = args.config;
        this.names = names;

        const labels = environmentLabels(cfg);
        for (const ns of this.names) {
            const namespace = new k8s.core.v1.Namespace(`${name}-${ns}`, { metadata: { name: ns, labels } }, { parent: this });
            this.byName.set(ns, namespace);
            this.guardrailsByName.set(ns, [namespace, ...guardrailsOf(`${name}-${ns}`, cfg, ns, labels, { parent: this, dependsOn: [namespace] })]);
        }
        this.registerOutputs({ names: this.names });
    }

    /** The Namespace and its guardrails an object of the namespace waits for, or undefined when the namespace is not declared. */
    guardrails(name: string): pulumi.Resource[] | undefined {
        return this.guardrailsByName.get(name);
    }

    /** The Namespace object, for dependsOn of resources that only need their own namespace. */
    namespace(name: string): k8s.core.v1.Namespace {
        const ns = this.byName.get(name);
        if (!ns) throw new Error(`namespace ${name} is not declared; declared: ${this.names.join(", ")}`);
        return ns;
    }
}

/**
 * A namespace's guardrails: container defaults, its quota, deny-all but cluster DNS, and the ACME
 * solver's way in. Returned is what an object of the namespace waits for: pods take the
 * LimitRange's defaults at admission, count against the quota, and start denied but for cluster DNS.
 */
function guardrailsOf(name: string, cfg: StackConfig, ns: string, labels: Record<string, string>, opts: pulumi.CustomResourceOptions): pulumi.Resource[] {
    const l = cfg.guardrails.limitRange;
    const meta = (n: string) => ({ name: n, namespace: ns, labels });
    const defaults = new k8s.core.v1.LimitRange(`${name}-defaults`, {
        metadata: meta("container-defaults"),
        spec: {
            limits: [{
                type: "Container",
                default: { cpu: l.defaultCpu, memory: l.defaultMemory },
                defaultRequest: { cpu: l.defaultRequestCpu, memory: l.defaultRequestMemory },
            }],
        },
    }, opts);
    const quota = new k8s.core.v1.ResourceQuota(`${name}-quota`, { metadata: meta("namespace-quota"), spec: { hard: quotaFor(cfg, ns) } }, opts);
    const denyAll = new k8s.networking.v1.NetworkPolicy(`${name}-default-deny`, {
        metadata: meta("default-deny"),
        spec: { podSelector: {}, policyTypes: ["Ingress", "Egress"] },
    }, opts);
    const allowDns = new k8s.networking.v1.NetworkPolicy(`${name}-allow-dns`, {
        metadata: meta("allow-dns"),
        spec: {
            podSelector: {},
            policyTypes: ["Egress"],
            egress: [{ to: clusterDns.peers, ports: DNS_PORTS.map((p) => ({ port: p.port, protocol: p.protocol ?? "TCP" })) }],
        },
    }, opts);
    new k8s.networking.v1.NetworkPolicy(`${name}-allow-acme-solver`, {
        metadata: meta("allow-acme-http01-solver"),
        spec: {
            podSelector: { matchLabels: { [ACME_SOLVER.label]: "true" } },
            policyTypes: ["Ingress"],
            ingress: [{ from: ingressController(cfg.ingress.controllerNamespace).peers, ports: [{ port: ACME_SOLVER.port, protocol: "TCP" }] }],
        },
    }, opts);
    return [defaults, quota, denyAll, allowDns];
}
