/**
 * The model bridge (sections 2.8, 4.2, 8.2): a stateless Deployment behind an autoscaler that
 * lists models on /v1/models and streams completions; its ingress has buffering off.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import type { StackConfig } from "../config";
import { cpuAutoscaler, disruptionBudget } from "./lib/availability";
import { webIngress } from "./lib/ingress";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, ingressController, internet, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, scratch } from "./lib/pod";

export interface BridgeArgs {
    config: StackConfig;
}

const APP = "model-bridge";

/** The bridge's settings file (section 2.8): every value a string, as the bridge expects. */
export function bridgeSettings(cfg: StackConfig): Record<string, string> {
    const b = cfg.bridge;
    return {
        defaultModel: b.defaultModel,
        openaiStreamChunkSize: String(b.streamChunkSize),
        openaiStreamChunkDelayMs: String(b.streamChunkDelayMs),
        enableLeadingEchoFilter: String(b.enableLeadingEchoFilter),
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

        const settings = new k8s.core.v1.ConfigMap(`${name}-settings`, {
            metadata: { name: `${APP}-settings`, namespace: ns, labels: l.labels },
            data: { "settings.json": JSON.stringify(bridgeSettings(cfg), null, 2) + "\n" },
        }, child);
        const upstream = new k8s.core.v1.Secret(`${name}-upstream`, {
            metadata: { name: `${APP}-upstream`, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { "api-key": b.upstreamApiKey },
        }, child);
        const tmp = scratch("tmp", "/tmp");

        const deployment = new k8s.apps.v1.Deployment(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels, annotations: reloaderAnnotations(cfg, { configMaps: [`${APP}-settings`], secrets: [`${APP}-upstream`] }) },
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
                            env: [
                                { name: "PORT", value: String(b.port) },
                                { name: "BRIDGE_SETTINGS", value: "/etc/model-bridge/settings.json" },
                                { name: "UPSTREAM_API_KEY", valueFrom: { secretKeyRef: { name: upstream.metadata.name, key: "api-key" } } },
                            ],
                            resources: b,
                            readinessProbe: httpProbe("/v1/models", "http", { period: 10 }),
                            livenessProbe: httpProbe("/v1/models", "http", { initialDelay: 10, period: 30 }),
                            preStopDelay: b.preStopDelay,
                            volumeMounts: [{ name: "settings", mountPath: "/etc/model-bridge", readOnly: true }, tmp.mount],
                        })],
                        volumes: [{ name: "settings", configMap: { name: settings.metadata.name } }, tmp.volume],
                    }),
                },
            },
        }, child);

        new k8s.core.v1.Service(name, {
            metadata: { name: APP, namespace: ns, labels: l.labels },
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
            ingress: [
                { peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: b.port }] },
                { peer: podsIn(ns, { "app.kubernetes.io/name": "agent-server" }, "the agent servers"), ports: [{ port: b.port }] },
            ],
            egress: [{ peer: internet(), ports: [{ port: b.upstreamPort }] }],
        }, child);

        this.baseUrl = `http://${APP}.${ns}.svc.cluster.local:${b.port}/v1`;
        this.selector = l.selector;
        this.namespace = ns;
        this.port = b.port;
        this.registerOutputs({ baseUrl: this.baseUrl });
    }
}
