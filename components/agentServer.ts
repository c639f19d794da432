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
import { appLabels, reloaderAnnotations } from "./lib/labels";
import { allowOnly, Flow, ingressController, internet, namespace as inNamespace, podsIn } from "./lib/network";
import { hardenedContainer, hardenedPodSpec, httpProbe, scratch, tcpProbe } from "./lib/pod";
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
        const g = cfg.gatewayTool;
        const ns = a.namespace;
        const child = { parent: this };
        const common = appLabels(cfg, { name: APP, component: "server", instance: APP });

        const password = new random.RandomPassword(`${name}-password`, { length: a.passwordLength, special: false, upper: true, lower: true, numeric: true }, child);
        const authSecret = new k8s.core.v1.Secret(`${name}-auth`, {
            metadata: { name: AGENT_AUTH_SECRET.name, namespace: ns, labels: common.labels },
            type: "Opaque",
            stringData: { [AGENT_AUTH_SECRET.usernameKey]: a.username, [AGENT_AUTH_SECRET.passwordKey]: password.result },
        }, child);
        const modelSecret = new k8s.core.v1.Secret(`${name}-model`, {
            metadata: { name: `${APP}-model`, namespace: ns, labels: common.labels },
            type: "Opaque",
            stringData: { "api-key": a.provider.apiKey },
        }, child);
        const gatewaySecret = new k8s.core.v1.Secret(`${name}-gateway-admin`, {
            metadata: { name: "gateway-admin", namespace: ns, labels: common.labels },
            type: "Opaque",
            stringData: { "admin-api-key": g.adminApiKey },
        }, child);

        // A proxy with credentials: the whole URL is a secret, read from this Secret (never an env literal).
        const proxySecret = a.httpProxy && a.httpProxyCredentials
            ? new k8s.core.v1.Secret(`${name}-proxy`, {
                metadata: { name: `${APP}-proxy`, namespace: ns, labels: common.labels },
                type: "Opaque",
                stringData: { url: pulumi.secret(proxyUrlWithCredentials(a.httpProxy, a.httpProxyCredentials)) },
            }, child)
            : undefined;

        const configMap = new k8s.core.v1.ConfigMap(`${name}-config`, {
            metadata: { name: `${APP}-config`, namespace: ns, labels: common.labels },
            data: { "config.json": agentConfigFile(cfg), [CONFIG_ITEMS.globalReadme.key]: GLOBAL_CONFIG_README },
        }, child);

        let oauthSecret: k8s.core.v1.Secret | undefined;
        if (a.oauthProxy.enabled) {
            const cookie = new random.RandomPassword(`${name}-cookie-secret`, { length: a.oauthProxy.cookieSecretLength, special: false }, child);
            oauthSecret = new k8s.core.v1.Secret(`${name}-oauth`, {
                metadata: { name: `${APP}-oauth`, namespace: ns, labels: common.labels },
                type: "Opaque",
                stringData: {
                    "client-id": a.oauthProxy.clientId!,
                    "client-secret": a.oauthProxy.clientSecret!,
                    "cookie-secret": cookie.result,
                },
            }, child);
        }

        this.urls = [];
        this.serviceNames = [];
        a.ports.forEach((port, index) => {
            const instance = `${APP}-${port}`;
            const l = appLabels(cfg, { name: APP, component: "server", instance });
            const pvc = (suffix: string, size: string) =>
                new k8s.core.v1.PersistentVolumeClaim(`${name}-${port}-${suffix}`, {
                    metadata: { name: `${instance}-${suffix}`, namespace: ns, labels: l.labels },
                    spec: { accessModes: ["ReadWriteOnce"], storageClassName: a.storageClass, resources: { requests: { storage: size } } },
                }, { ...child, protect: cfg.environment.tier === "prod" });
            const data = pvc("data", a.dataVolumeSize);
            const workspace = pvc("workspace", a.workspaceVolumeSize);
            const tmp = scratch("tmp", "/tmp");
            // HOME is writable scratch (opencode writes below it); its cache is a larger scratch (the
            // file tree and tool caches); data and state are on the volume.
            const home = scratch("home", AGENT_PATHS.home);
            const cache = scratch("cache", AGENT_PATHS.cache, "1Gi");

            const env = [
                { name: ENV.serverUsername, valueFrom: { secretKeyRef: { name: authSecret.metadata.name, key: "username" } } },
                { name: ENV.serverPassword, valueFrom: { secretKeyRef: { name: authSecret.metadata.name, key: "password" } } },
                { name: ENV.modelApiKey, valueFrom: { secretKeyRef: { name: modelSecret.metadata.name, key: "api-key" } } },
                { name: ENV.gatewayAdminKey, valueFrom: { secretKeyRef: { name: gatewaySecret.metadata.name, key: "admin-api-key" } } },
                ...agentPathEnv(),
                ...agentServerFlags(),
                ...proxyEnv(cfg, proxySecret?.metadata.name),
            ];
            // Basic authentication covers every route but OPTIONS, /global/health included (opencode's
            // server middleware), so an HTTP probe without credentials gets 401: the kubelet probes
            // the TCP port, and no credential goes into the pod spec.
            const probe = (t: { initialDelay?: number; period?: number; failureThreshold?: number }) => tcpProbe("http", t);
            const server = hardenedContainer({
                name: "server",
                image: a.image,
                args: ["serve", "--port", String(port), "--hostname", a.bindAddress],
                ports: [{ name: "http", containerPort: port }],
                env,
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
                    tmp.mount,
                    home.mount,
                    cache.mount,
                ],
            });
            const containers = [server];
            let servicePort = port;
            if (oauthSecret) {
                servicePort = a.oauthProxy.port;
                containers.push(oauthProxyContainer(cfg, port, oauthSecret.metadata.name));
            }

            new k8s.apps.v1.Deployment(`${name}-${port}`, {
                metadata: {
                    name: instance,
                    namespace: ns,
                    labels: l.labels,
                    annotations: reloaderAnnotations(cfg, { configMaps: [`${APP}-config`], secrets: [`${APP}-auth`, `${APP}-model`, "gateway-admin", ...(oauthSecret ? [`${APP}-oauth`] : [])] }),
                },
                spec: {
                    replicas: 1,
                    // The configuration is read only at start (section 9.6): stop the old pod before the new one starts.
                    strategy: { type: "Recreate" },
                    selector: { matchLabels: l.selector },
                    template: {
                        metadata: { labels: l.labels },
                        spec: hardenedPodSpec(cfg, {
                            terminationGracePeriodSeconds: a.terminationGracePeriod,
                            containers,
                            volumes: [
                                { name: "config", configMap: { name: configMap.metadata.name, defaultMode: 0o444, items: Object.values(CONFIG_ITEMS) } },
                                { name: "data", persistentVolumeClaim: { claimName: data.metadata.name } },
                                { name: "workspace", persistentVolumeClaim: { claimName: workspace.metadata.name } },
                                tmp.volume,
                                home.volume,
                                cache.volume,
                            ],
                        }),
                    },
                },
            }, { ...child, dependsOn: [authSecret, modelSecret, gatewaySecret] });

            // The bridge calls opencode itself: behind the OAuth proxy its instance's Service also
            // publishes the server port, which only the bridge's pods may reach (network policy below).
            const bridgeTarget = port === cfg.bridge.agentServerPort;
            const servicePorts = [{ name: "http", port: servicePort, targetPort: servicePort, protocol: "TCP" }];
            if (bridgeTarget && servicePort !== port) servicePorts.push({ name: "server", port, targetPort: port, protocol: "TCP" });
            const service = new k8s.core.v1.Service(`${name}-${port}`, {
                metadata: withoutSettlingWait({ name: instance, namespace: ns, labels: l.labels }),
                spec: { type: "ClusterIP", selector: l.selector, ports: servicePorts },
            }, child);

            const hostLabel = index === 0 ? a.hostLabel : `${a.hostLabel}-${port}`;
            webIngress(instance, cfg, { namespace: ns, hostLabel, serviceName: instance, servicePort, labels: l.labels }, { ...child, dependsOn: [service] });

            disruptionBudget(instance, { namespace: ns, labels: l.labels, selector: l.selector, replicas: 1 }, child);
            allowOnly(instance, {
                namespace: ns,
                podSelector: l.selector,
                labels: l.labels,
                ingress: [
                    { peer: ingressController(cfg.ingress.controllerNamespace), ports: [{ port: servicePort }] },
                    ...(bridgeTarget ? [{ peer: podsIn(args.bridge.namespace, args.bridge.selector, "the model bridge"), ports: [{ port }] }] : []),
                ],
                egress: egressFlows(cfg),
            }, child);

            this.serviceNames.push(instance);
            this.urls.push(pulumi.output(`https://${hostOf(cfg, hostLabel)}`));
        });

        this.passwordSecretName = `${APP}-auth`;
        this.configMapName = `${APP}-config`;
        this.registerOutputs({ urls: this.urls, serviceNames: this.serviceNames, passwordSecretName: this.passwordSecretName });
    }
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
