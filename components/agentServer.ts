/**
 * The agent server (sections 2.8, 4.1, 5.1-5.3, 8.2): one Deployment per configured port, each
 * with its data and workspace volumes, a read-only configuration file generated from typed
 * config, basic authentication, an optional OAuth 2.0 reverse proxy, and the gateway admin tool
 * server as a local tool server.
 */
import * as k8s from "@pulumi/kubernetes";
import * as pulumi from "@pulumi/pulumi";
import * as random from "@pulumi/random";
import type { StackConfig } from "../config";
import { disruptionBudget } from "./lib/availability";
import { hostOf, webIngress } from "./lib/ingress";
import { AppLabels, appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, ingressController, internet, namespace as inNamespace, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, PodArgs, scratch, tcpProbe } from "./lib/pod";
import { protectedClaim } from "./lib/protectedClaim";
import { AGENT_PATHS, agentConfigFile, agentServerFlags, ENV, GLOBAL_CONFIG_README } from "./agentServerConfig";
import { withoutSettlingWait } from "./lib/engineOrder";

export interface AgentServerArgs {
    config: StackConfig;
    /** The model bridge's pods: a client of the instance on bridgeAgentServerPort (the bridge is in front of the agent server). */
    bridge: { selector: Record<string, string>; namespace: string };
}

const APP = "agent-server";

/** The agent server's basic-authentication Secret: its keys feed OPENCODE_SERVER_USERNAME/PASSWORD here and in the model bridge. */
export const AGENT_AUTH_SECRET = { name: `${APP}-auth`, usernameKey: "username", passwordKey: "password" } as const;

/** The instance on one port: its Deployment and Service name, namespace, pod selector and in-cluster URL of the server port. */
export function agentServerInstance(cfg: StackConfig, port: number) {
    const name = `${APP}-${port}`;
    const namespace = cfg.agentServer.namespace;
    return {
        name,
        namespace,
        port,
        selector: appLabels(cfg, { name: APP, component: "server", instance: name }).selector,
        url: `http://${name}.${namespace}.svc.cluster.local:${port}`,
    };
}

export class AgentServer extends pulumi.ComponentResource {
    public readonly urls: pulumi.Output<string>[];
    public readonly serviceNames: string[];
    public readonly passwordSecretName: string;
    public readonly configMapName: string;

    constructor(name: string, args: AgentServerArgs, opts?: pulumi.ComponentResourceOptions) {
        super("ops:apps:AgentServer", name, {}, opts);
        const cfg = args.config;
        const a = cfg.agentServer;
        const child = { parent: this };
        const common = appLabels(cfg, { name: APP, component: "server", instance: APP });

        const secrets = serverSecrets(name, cfg, common.labels, child);
        const configMap = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${APP}-config`, namespace: a.namespace, labels: common.labels },
            data: { "config.json": agentConfigFile(cfg), [CONFIG_ITEMS.globalReadme.key]: GLOBAL_CONFIG_README },
        }, child);
        const oauth = a.oauthProxy.enabled ? oauthProxySecret(name, cfg, common.labels, child) : undefined;

        // One instance per port, each with its own volumes, Deployment, Service and host.
        this.urls = [];
        this.serviceNames = [];
        a.ports.forEach((port, index) => {
            const hostLabel = index === 0 ? a.hostLabel : `${a.hostLabel}-${port}`;
            const serviceName = serverInstance(`${name}-${port}`, cfg, { port, hostLabel, secrets: { ...secrets, oauth }, configMap, bridge: args.bridge }, child);
            this.serviceNames.push(serviceName);
            this.urls.push(pulumi.output(`https://${hostOf(cfg, hostLabel)}`));
        });

        this.passwordSecretName = `${APP}-auth`;
        this.configMapName = `${APP}-config`;
        this.registerOutputs({ urls: this.urls, serviceNames: this.serviceNames, passwordSecretName: this.passwordSecretName });
    }
}

/** The Secrets an instance reads (the OAuth proxy's only when it is enabled). */
type ServerSecrets = ReturnType<typeof serverSecrets> & { oauth?: k8s.core.v1.Secret };

/** Basic authentication (a generated password), the model API key, the gateway admin key and, when it carries credentials, the proxy URL. */
function serverSecrets(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions) {
    const a = cfg.agentServer;
    const secret = (suffix: string, secretName: string, stringData: Record<string, pulumi.Input<string>>) =>
        new k8s.core.v1.Secret(`${name}-${suffix}`, { metadata: { name: secretName, namespace: a.namespace, labels }, type: "Opaque", stringData }, opts);
    const password = new random.RandomPassword(`${name}-password`, { length: a.passwordLength, special: false, upper: true, lower: true, numeric: true }, opts);
    return {
        auth: secret("auth", AGENT_AUTH_SECRET.name, { [AGENT_AUTH_SECRET.usernameKey]: a.username, [AGENT_AUTH_SECRET.passwordKey]: password.result }),
        model: secret("model", `${APP}-model`, { "api-key": a.provider.apiKey }),
        gateway: secret("gateway-admin", "gateway-admin", { "admin-api-key": cfg.gatewayTool.adminApiKey }),
        // A proxy with credentials: the whole URL is a secret, read from this Secret (never an env literal).
        proxy: a.httpProxy && a.httpProxyCredentials
            ? secret("proxy", `${APP}-proxy`, { url: pulumi.secret(proxyUrlWithCredentials(a.httpProxy, a.httpProxyCredentials)) })
            : undefined,
    };
}

/** The OAuth 2.0 proxy's client and its generated cookie secret. */
function oauthProxySecret(name: string, cfg: StackConfig, labels: Record<string, string>, opts: pulumi.CustomResourceOptions): k8s.core.v1.Secret {
    const o = cfg.agentServer.oauthProxy;
    const cookie = new random.RandomPassword(`${name}-cookie-secret`, { length: o.cookieSecretLength, special: false }, opts);
    return new k8s.core.v1.Secret(`${name}-oauth`, {
        metadata: { name: `${APP}-oauth`, namespace: cfg.agentServer.namespace, labels },
        type: "Opaque",
        stringData: { "client-id": o.clientId!, "client-secret": o.clientSecret!, "cookie-secret": cookie.result },
    }, opts);
}

interface InstanceArgs {
    port: number;
    hostLabel: string;
    secrets: ServerSecrets;
    configMap: k8s.core.v1.ConfigMap;
    bridge: AgentServerArgs["bridge"];
}

/**
 * The instance on one port: its Deployment and volumes, its Service and host, and its network
 * policy. Behind the OAuth proxy the Service and the host serve the proxy's port; the bridge calls
 * opencode itself, so the bridge's instance also publishes the server port, which only the
 * bridge's pods may reach. Returns the Service's name.
 */
function serverInstance(name: string, cfg: StackConfig, args: InstanceArgs, opts: pulumi.CustomResourceOptions): string {
    const ns = cfg.agentServer.namespace;
    const instance = `${APP}-${args.port}`;
    const l = appLabels(cfg, { name: APP, component: "server", instance });
    const servicePort = args.secrets.oauth ? cfg.agentServer.oauthProxy.port : args.port;
    const bridgeTarget = args.port === cfg.bridge.agentServerPort;

    serverDeployment(name, cfg, instance, l, args, opts);
    const ports = [{ name: "http", port: servicePort, targetPort: servicePort, protocol: "TCP" }];
    if (bridgeTarget && servicePort !== args.port) ports.push({ name: "server", port: args.port, targetPort: args.port, protocol: "TCP" });
    const service = new k8s.core.v1.Service(name, {
        metadata: withoutSettlingWait({ name: instance, namespace: ns, labels: l.labels }),
        spec: { type: "ClusterIP", selector: l.selector, ports },
    }, opts);
    webIngress(instance, cfg, { namespace: ns, hostLabel: args.hostLabel, serviceName: instance, servicePort, labels: l.labels }, { ...opts, dependsOn: [service] });
    disruptionBudget(instance, { namespace: ns, labels: l.labels, selector: l.selector, replicas: 1 }, opts);
    allowOnly(instance, {
        namespace: ns,
        podSelector: l.selector,
        labels: l.labels,
        ingress: [
            { peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: servicePort }] },
            ...(bridgeTarget ? [{ peer: podsIn(args.bridge.namespace, args.bridge.selector, "the model bridge"), ports: [{ port: args.port }] }] : []),
        ],
        egress: egressFlows(cfg),
    }, opts);
    return instance;
}

/** The instance's data and workspace volumes and its one pod, restarted when its configuration or Secrets change. */
function serverDeployment(name: string, cfg: StackConfig, instance: string, l: AppLabels, args: InstanceArgs, opts: pulumi.CustomResourceOptions): k8s.apps.v1.Deployment {
    const a = cfg.agentServer;
    const claim = (suffix: string, size: string) => protectedClaim(`${name}-${suffix}`, cfg, { name: `${instance}-${suffix}`, namespace: a.namespace, labels: l.labels, size, storageClass: a.storageClass }, opts);
    const claims = { data: claim("data", a.dataVolumeSize), workspace: claim("workspace", a.workspaceVolumeSize) };
    const { auth, model, gateway, oauth } = args.secrets;
    return new k8s.apps.v1.Deployment(name, {
        metadata: {
            name: instance,
            namespace: a.namespace,
            labels: l.labels,
            annotations: reloaderAnnotations(cfg, { configMaps: [`${APP}-config`], secrets: [`${APP}-auth`, `${APP}-model`, "gateway-admin", ...(oauth ? [`${APP}-oauth`] : [])] }),
        },
        spec: {
            replicas: 1,
            // The configuration is read only at start (section 9.6): stop the old pod before the new one starts.
            strategy: { type: "Recreate" },
            selector: { matchLabels: l.selector },
            template: { metadata: { labels: l.labels }, spec: hardenedPodSpec(cfg, serverPod(cfg, args, claims)) },
        },
    }, { ...opts, dependsOn: [auth, model, gateway] });
}

/**
 * An instance's pod: opencode on the configuration, data and workspace volumes (HOME and its cache
 * are writable scratch: opencode writes below them), and the OAuth proxy in front when enabled.
 */
function serverPod(cfg: StackConfig, args: InstanceArgs, claims: Record<"data" | "workspace", k8s.core.v1.PersistentVolumeClaim>): PodArgs {
    const a = cfg.agentServer;
    const scratches = [scratch("tmp", "/tmp"), scratch("home", AGENT_PATHS.home), scratch("cache", AGENT_PATHS.cache, "1Gi")];
    const server = serverContainer(cfg, args.port, args.secrets, scratches.map((s) => s.mount));
    const oauth = args.secrets.oauth;
    return {
        terminationGracePeriodSeconds: a.terminationGracePeriod,
        containers: oauth ? [server, oauthProxyContainer(cfg, args.port, oauth.metadata.name)] : [server],
        volumes: [
            { name: "config", configMap: { name: args.configMap.metadata.name, defaultMode: 0o444, items: Object.values(CONFIG_ITEMS) } },
            { name: "data", persistentVolumeClaim: { claimName: claims.data.metadata.name } },
            { name: "workspace", persistentVolumeClaim: { claimName: claims.workspace.metadata.name } },
            ...scratches.map((s) => s.volume),
        ],
    };
}

/**
 * opencode serving on `port`. Basic authentication covers every route but OPTIONS, /global/health
 * included (opencode's server middleware), so an HTTP probe without credentials gets 401: the
 * kubelet probes the TCP port, and no credential goes into the pod spec.
 */
function serverContainer(cfg: StackConfig, port: number, secrets: ServerSecrets, scratchMounts: { name: string; mountPath: string }[]) {
    const a = cfg.agentServer;
    const fromSecret = (envName: string, secret: k8s.core.v1.Secret, key: string) => ({ name: envName, valueFrom: { secretKeyRef: { name: secret.metadata.name, key } } });
    const probe = (t: { initialDelay?: number; period?: number; failureThreshold?: number }) => tcpProbe("http", t);
    return hardenedContainer({
        name: "server",
        image: a.image,
        args: ["serve", "--port", String(port), "--hostname", a.bindAddress],
        ports: [{ name: "http", containerPort: port }],
        env: [
            fromSecret(ENV.serverUsername, secrets.auth, "username"),
            fromSecret(ENV.serverPassword, secrets.auth, "password"),
            fromSecret(ENV.modelApiKey, secrets.model, "api-key"),
            fromSecret(ENV.gatewayAdminKey, secrets.gateway, "admin-api-key"),
            ...agentPathEnv(),
            ...agentServerFlags(),
            ...proxyEnv(cfg, secrets.proxy?.metadata.name),
        ],
        resources: a,
        startupProbe: probe({ period: a.startup.period, failureThreshold: a.startup.failureThreshold }),
        livenessProbe: probe(a.liveness),
        readinessProbe: probe(a.readiness),
        preStopDelay: a.preStopDelay,
        workingDir: AGENT_PATHS.workspace,
        volumeMounts: [
            { name: "config", mountPath: AGENT_PATHS.configDir, readOnly: true },
            { name: "data", mountPath: AGENT_PATHS.data },
            { name: "workspace", mountPath: AGENT_PATHS.workspace },
            ...scratchMounts,
        ],
    });
}

function egressFlows(cfg: StackConfig): Flow[] {
    const a = cfg.agentServer;
    const g = cfg.gatewayTool;
    const flows: Flow[] = [];
    if (g.enabled) flows.push({ peer: inNamespace(g.namespace), ports: [{ port: portOf(g.baseUrl) }] });
    // An in-cluster model API (<service>.<namespace>.svc...): its namespace, on its port.
    const providerNs = isInCluster(a.provider.baseUrl) ? new URL(a.provider.baseUrl).hostname.split(".")[1] : undefined;
    if (providerNs) flows.push({ peer: inNamespace(providerNs), ports: [{ port: portOf(a.provider.baseUrl) }] });
    const external = [a.provider.baseUrl, a.oauthProxy.enabled ? a.oauthProxy.issuerUrl : undefined, a.httpProxy].filter((u): u is string => !!u && !isInCluster(u));
    if (external.length > 0) flows.push({ peer: internet(), ports: [...new Set(external.map(portOf))].map((port) => ({ port })) });
    return flows;
}

const portOf = (u: string) => Number(new URL(u).port) || (new URL(u).protocol === "https:" ? 443 : 80);
const isInCluster = (u: string) => /\.svc(\.cluster\.local)?$/.test(new URL(u).hostname) || !new URL(u).hostname.includes(".");

/** The configuration mount's files: the configuration, and a file that makes opencode's global config folder exist (read-only). */
const CONFIG_ITEMS = {
    config: { key: "config.json", path: "config.json" },
    globalReadme: { key: "opencode-global-readme", path: `${AGENT_PATHS.globalConfigDir.slice(AGENT_PATHS.configDir.length + 1)}/README` },
};

/** Where opencode finds its configuration file and keeps its XDG folders (all writable but the configuration's). */
export function agentPathEnv() {
    return [
        { name: ENV.configFile, value: AGENT_PATHS.configFile },
        { name: "HOME", value: AGENT_PATHS.home },
        // opencode's global config folder is XDG_CONFIG_HOME/opencode: read-only, so opencode installs nothing there at start.
        { name: "XDG_CONFIG_HOME", value: AGENT_PATHS.configDir },
        { name: "XDG_CACHE_HOME", value: AGENT_PATHS.cache },
        { name: "XDG_DATA_HOME", value: AGENT_PATHS.data },
        { name: "XDG_STATE_HOME", value: `${AGENT_PATHS.data}/state` },
    ];
}

/** The proxy URL with <user>:<password> put in, kept secret. */
function proxyUrlWithCredentials(proxy: string, credentials: pulumi.Output<string>): pulumi.Output<string> {
    return credentials.apply((userPassword) => {
        const u = new URL(proxy);
        const i = userPassword.indexOf(":");
        u.username = userPassword.slice(0, i);
        u.password = userPassword.slice(i + 1);
        return u.toString().replace(/\/$/, proxy.endsWith("/") ? "/" : "");
    });
}

/** HTTP(S)_PROXY and a NO_PROXY that covers every in-cluster host (section 7, UND_ERR_SOCKET); the proxy URL from `secretName` when it has credentials. */
function proxyEnv(cfg: StackConfig, secretName?: pulumi.Input<string>) {
    const proxy = cfg.agentServer.httpProxy;
    if (!proxy) return [];
    const noProxy = ["localhost", "127.0.0.1", "::1", ".svc", ".svc.cluster.local", ".cluster.local", "10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", new URL(cfg.gatewayTool.baseUrl).hostname, ...cfg.agentServer.noProxyExtra].join(",");
    const url = (name: string) => (secretName ? { name, valueFrom: { secretKeyRef: { name: secretName, key: "url" } } } : { name, value: proxy });
    return [url("HTTP_PROXY"), url("HTTPS_PROXY"), { name: "NO_PROXY", value: noProxy }, url("http_proxy"), url("https_proxy"), { name: "no_proxy", value: noProxy }];
}

function oauthProxyContainer(cfg: StackConfig, upstreamPort: number, secretName: pulumi.Input<string>) {
    const o = cfg.agentServer.oauthProxy;
    const fromSecret = (name: string, key: string) => ({ name, valueFrom: { secretKeyRef: { name: secretName, key } } });
    return hardenedContainer({
        name: "oauth-proxy",
        image: o.image,
        args: [
            `--provider=${o.provider}`,
            `--oidc-issuer-url=${o.issuerUrl}`,
            `--http-address=0.0.0.0:${o.port}`,
            `--upstream=http://127.0.0.1:${upstreamPort}/`,
            "--email-domain=*",
            "--skip-provider-button=true",
            "--reverse-proxy=true",
        ],
        env: [fromSecret("OAUTH2_PROXY_CLIENT_ID", "client-id"), fromSecret("OAUTH2_PROXY_CLIENT_SECRET", "client-secret"), fromSecret("OAUTH2_PROXY_COOKIE_SECRET", "cookie-secret")],
        ports: [{ name: "proxy", containerPort: o.port }],
        resources: o,
        livenessProbe: httpProbe("/ping", o.port, { period: 30 }),
        readinessProbe: httpProbe("/ready", o.port, { period: 10 }),
        preStopDelay: cfg.agentServer.preStopDelay,
    });
}
