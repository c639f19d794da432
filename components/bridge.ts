/**
 * The model bridge (sections 2.8, 4.2, 8.2): opencode-bridge, an OpenAI-compatible API under /v1
 * in front of the agent server. It lists DEFAULT_MODEL on /v1/models and turns chat completions
 * into agent server sessions and messages, forwarding them to OPENCODE_BASE. A stateless
 * Deployment behind an autoscaler; its ingress has buffering off (it streams).
 *
 * The bridge sends no credentials to the agent server (its requests carry only Content-Type;
 * docs/product-settings.md): with the agent server's basic authentication on, what it forwards is
 * refused with 401, while /v1/models and /health, which the bridge answers itself, work.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config";
import { agentServerInstance } from "./agentServer";
import { cpuAutoscaler, disruptionBudget } from "./lib/availability";
import { AUTOSCALED_REPLICAS } from "./lib/fieldOwnership";
import { webIngress } from "./lib/ingress";
import { appLabels } from "./lib/labels";
import { allowOnly, ingressController, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, scratch } from "./lib/pod";
import { withoutSettlingWait } from "./lib/engineOrder";

export interface BridgeArgs {
    config: StackConfig;
}

const APP = "model-bridge";

/**
 * The environment opencode-bridge reads (its bridge/lib/config.js): the specification's
 * defaultModel, openaiStreamChunkSize, openaiStreamChunkDelayMs and enableLeadingEchoFilter, its
 * port and the agent server it forwards to. Every value a string.
 */
export function bridgeEnv(cfg: StackConfig): Record<string, string> {
    const b = cfg.bridge;
    return {
        BRIDGE_PORT: String(b.port),
        OPENCODE_BASE: agentServerInstance(cfg, b.agentServerPort).url,
        DEFAULT_MODEL: b.defaultModel,
        OPENAI_STREAM_CHUNK_SIZE: String(b.streamChunkSize),
        OPENAI_STREAM_CHUNK_DELAY_MS: String(b.streamChunkDelayMs),
        ENABLE_LEADING_ECHO_FILTER: String(b.enableLeadingEchoFilter),
    };
}

export class Bridge extends pulumi.ComponentResource {
    public readonly baseUrl: string;
    public readonly selector: Record<string, string>;
    public readonly namespace: string;
    public readonly port: number;

    constructor(name: string, args: BridgeArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:Bridge", name, {}, opts);
        const cfg = args.config;
        const b = cfg.bridge;
        const ns = cfg.agentServer.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "bridge", instance: APP });

        const agent = agentServerInstance(cfg, b.agentServerPort);
        const tmp = scratch("tmp", "/tmp");

        const deployment = new k8s.apps.v1.Deployment(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels },
            spec: {
                replicas: b.replicas,
                strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
                selector: { matchLabels: l.selector },
                template: {
                    metadata: { labels: l.labels },
                    spec: hardenedPodSpec(cfg, {
                        terminationGracePeriodSeconds: b.terminationGracePeriod,
                        spreadSelector: l.selector,
                        containers: [hardenedContainer({
                            name: "bridge",
                            image: b.image,
                            args: b.args ? [...b.args] : undefined,
                            ports: [{ name: "http", containerPort: b.port }],
                            env: Object.entries(bridgeEnv(cfg)).map(([envName, value]) => ({ name: envName, value })),
                            resources: b,
                            // /health is answered by the bridge itself (as in the product's chart), without the agent server.
                            readinessProbe: httpProbe("/health", "http", { period: 10 }),
                            livenessProbe: httpProbe("/health", "http", { initialDelay: 10, period: 30 }),
                            preStopDelay: b.preStopDelay,
                            volumeMounts: [tmp.mount],
                        })],
                        volumes: [tmp.volume],
                    }),
                },
            },
        }, { ...child, ...AUTOSCALED_REPLICAS });

        new k8s.core.v1.Service(name, {
            metadata: withoutSettlingWait({ name: APP, namespace: ns, labels: l.labels }),
            spec: { type: "ClusterIP", selector: l.selector, ports: [{ name: "http", port: b.port, targetPort: "http", protocol: "TCP" }] },
        }, child);
        webIngress(APP, cfg, { namespace: ns, hostLabel: b.host, serviceName: APP, servicePort: b.port, labels: l.labels, buffering: false }, child);
        cpuAutoscaler(APP, {
            namespace: ns, labels: l.labels, target: { kind: "Deployment", name: APP },
            minReplicas: b.minReplicas, maxReplicas: b.maxReplicas, cpuUtilization: b.cpuUtilization, scaleDownWindow: b.scaleDownWindow,
        }, { ...child, dependsOn: [deployment] });
        disruptionBudget(APP, { namespace: ns, labels: l.labels, selector: l.selector, replicas: Math.max(b.replicas, b.minReplicas) }, child);
        allowOnly(APP, {
            namespace: ns,
            podSelector: l.selector,
            labels: l.labels,
            ingress: [{ peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: b.port }] }],
            egress: [{ peer: podsIn(agent.namespace, agent.selector, `the agent server ${agent.name}`), ports: [{ port: agent.port }] }],
        }, child);

        this.baseUrl = `http://${APP}.${ns}.svc.cluster.local:${b.port}/v1`;
        this.selector = l.selector;
        this.namespace = ns;
        this.port = b.port;
        this.registerOutputs({ baseUrl: this.baseUrl });
    }
}
