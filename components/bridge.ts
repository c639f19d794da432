/**
 * The model bridge (sections 2.8, 4.2, 8.2): this repository's bridge/ (image from
 * bridge/Containerfile), an OpenAI-compatible API under /v1 in front of one agent server instance.
 * It admits clients by the keys in its own generated Secret (a mounted file it reads again when it
 * changes, so a key rotates without restarting anything) and calls the agent server with the
 * basic authentication of the agent server's Secret. A stateless Deployment behind an autoscaler
 * (conversations find their session in the agent server, bridge/src/conversation.ts); its ingress
 * serves /v1 only, with buffering off (it streams).
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { ENV_NAMES } from "../bridge/src/settings";
import { AGENT_AUTH_SECRET, agentServerInstance } from "./agentServer";
import { BRIDGE_AGENT } from "./agentServerConfig";
import { quantityBytes } from "../config/schema";
import { cpuAutoscaler, disruptionBudget } from "./lib/availability";
import { AUTOSCALED_REPLICAS } from "./lib/fieldOwnership";
import { webIngress } from "./lib/ingress";
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, ingressController, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, PodArgs, scratch } from "./lib/pod";
import { withoutSettlingWait } from "./lib/engineOrder";

export interface BridgeArgs {
    config: StackConfig;
}

const APP = "model-bridge";

/** The bridge image's start command (bridge/Containerfile's ENTRYPOINT; a test holds them equal). */
export const BRIDGE_START = ["/usr/local/bin/node", "/app/main.js"] as const;

/** The client keys: a generated Secret, mounted as a folder; the bridge reads `<mount>/<key>`. */
export const BRIDGE_KEYS = { secret: `${APP}-api-keys`, key: "api-keys", mountPath: "/etc/model-bridge/keys" } as const;

/**
 * The bridge's memory limit, shared out: Node.js's heap gets half of it (NODE_OPTIONS
 * --max-old-space-size, and a small young generation, so the garbage collector works within the
 * pod's limit instead of the node's memory), and request bodies (BRIDGE_REQUEST_MEMORY_BYTES) what
 * that heap leaves after the process at rest (BASELINE), divided by the COPIES of a body held while
 * it is read, parsed and sent on (its text, the parsed messages, the prompt's JSON and bytes, and
 * opencode's echo of the prompt on its event stream: about 9.4 measured with 7.9 MB bodies). Checked
 * in test/products/bridge.products.ts: the largest bodies at once against the peak resident set.
 */
export const BODY_MEMORY = { heapShare: 0.5, semiSpaceMiB: 1, baselineBytes: 24 * 1024 * 1024, copies: 10 } as const;
const heapBytes = (memoryLimit: string) => Math.floor(quantityBytes(memoryLimit) * BODY_MEMORY.heapShare);
export const nodeOptions = (memoryLimit: string) => `--max-old-space-size=${Math.floor(heapBytes(memoryLimit) / 1048576)} --max-semi-space-size=${BODY_MEMORY.semiSpaceMiB}`;
export const requestMemoryBytes = (memoryLimit: string) => Math.max(64 * 1024, Math.floor((heapBytes(memoryLimit) - BODY_MEMORY.baselineBytes) / BODY_MEMORY.copies));

/** Rollouts: running chats may finish (up to the upstream time-out) after the preStop wait; 15 s more let the rest be aborted and taken out. */
export const bridgeGracePeriodSeconds = (cfg: StackConfig) => cfg.bridge.preStopDelay + Math.ceil(cfg.bridge.upstreamTimeoutMs / 1000) + 15;

/**
 * The bridge's plain settings (bridge/src/settings.ts reads them): the specification's
 * defaultModel, openaiStreamChunkSize, openaiStreamChunkDelayMs and enableLeadingEchoFilter under
 * opencode-bridge's names, its port, the agent server it forwards to, the keys file, the time-out,
 * the agent chats run as, whether asks are rejected, the idle time of sessions and the memory for
 * request bodies. Every value a string; the agent server's credentials come from its Secret.
 */
export function bridgeEnv(cfg: StackConfig): Record<string, string> {
    const b = cfg.bridge;
    return {
        [ENV_NAMES.port]: String(b.port),
        [ENV_NAMES.agentBase]: agentServerInstance(cfg, b.agentServerPort).url,
        [ENV_NAMES.defaultModel]: b.defaultModel,
        [ENV_NAMES.chunkSize]: String(b.streamChunkSize),
        [ENV_NAMES.chunkDelayMs]: String(b.streamChunkDelayMs),
        [ENV_NAMES.leadingEchoFilter]: String(b.enableLeadingEchoFilter),
        [ENV_NAMES.apiKeysFile]: `${BRIDGE_KEYS.mountPath}/${BRIDGE_KEYS.key}`,
        [ENV_NAMES.upstreamTimeoutMs]: String(b.upstreamTimeoutMs),
        [ENV_NAMES.agent]: BRIDGE_AGENT,
        [ENV_NAMES.rejectAsks]: String(!b.chatAsk),
        [ENV_NAMES.sessionIdleMs]: String(b.sessionIdleSeconds * 1000),
        [ENV_NAMES.requestMemoryBytes]: String(requestMemoryBytes(b.limits.memory)),
        NODE_OPTIONS: nodeOptions(b.limits.memory),
    };
}

export class Bridge extends pulumi.ComponentResource {
    public readonly baseUrl: string;
    public readonly selector: Record<string, string>;
    public readonly namespace: string;
    public readonly port: number;
    /** The Secret (key api-keys) whose keys clients send as `Authorization: Bearer <key>`. */
    public readonly apiKeysSecretName: string;

    constructor(name: string, args: BridgeArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:Bridge", name, {}, opts);
        const cfg = args.config;
        const b = cfg.bridge;
        const ns = cfg.agentServer.namespace;
        const child = { parent: this };
        const l = appLabels(cfg, { name: APP, component: "bridge", instance: APP });

        const agent = agentServerInstance(cfg, b.agentServerPort);

        // Rotation: replace this resource (pulumi up --replace <its URN>) or edit the Secret; the
        // bridge reads the mounted file again when the kubelet updates it. The agent server is not involved.
        const apiKey = new random.RandomPassword(`${name}-api-key`, { length: b.apiKeyLength, special: false, upper: true, lower: true, numeric: true }, child);
        const keys = new k8s.core.v1.Secret(`${name}-api-keys`, {
            metadata: { name: BRIDGE_KEYS.secret, namespace: ns, labels: l.labels },
            type: "Opaque",
            stringData: { [BRIDGE_KEYS.key]: pulumi.interpolate`${apiKey.result}\n` },
        }, child);
        const deployment = new k8s.apps.v1.Deployment(name, {
            // The agent server's password is an environment variable here: a new one restarts the bridge.
            metadata: { name: APP, namespace: ns, labels: l.labels, annotations: reloaderAnnotations(cfg, { secrets: [AGENT_AUTH_SECRET.name] }) },
            spec: {
                replicas: b.replicas,
                strategy: { type: "RollingUpdate", rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
                selector: { matchLabels: l.selector },
                template: { metadata: { labels: l.labels }, spec: hardenedPodSpec(cfg, bridgePod(cfg, l.selector, keys)) },
            },
        }, { ...child, ...AUTOSCALED_REPLICAS });

        new k8s.core.v1.Service(name, {
            metadata: withoutSettlingWait({ name: APP, namespace: ns, labels: l.labels }),
            spec: { type: "ClusterIP", selector: l.selector, ports: [{ name: "http", port: b.port, targetPort: "http", protocol: "TCP" }] },
        }, child);
        // Only the OpenAI API is public; /health and /ready are for the kubelet.
        webIngress(APP, cfg, { namespace: ns, hostLabel: b.host, serviceName: APP, servicePort: b.port, labels: l.labels, buffering: false, path: "/v1" }, child);
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
        this.apiKeysSecretName = BRIDGE_KEYS.secret;
        this.registerOutputs({ baseUrl: this.baseUrl, apiKeysSecretName: this.apiKeysSecretName });
    }
}

/** The bridge's pod: the client keys as a mounted folder, the agent server's credentials from its Secret. */
function bridgePod(cfg: StackConfig, spreadSelector: Record<string, string>, keys: k8s.core.v1.Secret): PodArgs {
    const b = cfg.bridge;
    const tmp = scratch("tmp", "/tmp");
    const fromAgentSecret = (envName: string, key: string) => ({ name: envName, valueFrom: { secretKeyRef: { name: AGENT_AUTH_SECRET.name, key } } });
    return {
        terminationGracePeriodSeconds: bridgeGracePeriodSeconds(cfg),
        spreadSelector,
        containers: [hardenedContainer({
            name: "bridge",
            image: b.image,
            // A stand-in (the ci stack) brings its own command line in args.
            command: b.args ? undefined : [...BRIDGE_START],
            args: b.args ? [...b.args] : undefined,
            ports: [{ name: "http", containerPort: b.port }],
            env: [
                ...Object.entries(bridgeEnv(cfg)).map(([envName, value]) => ({ name: envName, value })),
                fromAgentSecret(ENV_NAMES.agentUsername, AGENT_AUTH_SECRET.usernameKey),
                fromAgentSecret(ENV_NAMES.agentPassword, AGENT_AUTH_SECRET.passwordKey),
            ],
            resources: b,
            // /health: the process answers; /ready: the agent server answers the bridge's credentials.
            readinessProbe: httpProbe("/ready", "http", { period: 10, timeout: 6 }),
            livenessProbe: httpProbe("/health", "http", { initialDelay: 10, period: 30 }),
            preStopDelay: b.preStopDelay,
            volumeMounts: [tmp.mount, { name: "api-keys", mountPath: BRIDGE_KEYS.mountPath, readOnly: true }],
        })],
        volumes: [tmp.volume, { name: "api-keys", secret: { secretName: keys.metadata.name, defaultMode: 0o440 } }],
    };
}
