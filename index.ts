/**
 * The operations environment: configuration flows one way, from the typed stack configuration
 * to the components to the Kubernetes objects.
 */
import { loadConfig } from "./config";
import { AgentServer } from "./components/agentServer";
import { Bridge } from "./components/bridge";
import { Namespaces } from "./components/namespaces";

const config = loadConfig();

const namespaces = new Namespaces("namespaces", { config });
const inNamespaces = { dependsOn: [namespaces] };

const bridge = new Bridge("bridge", { config }, inNamespaces);
const agentServer = new AgentServer("agent-server", {
    config,
    bridge: { baseUrl: bridge.baseUrl, selector: bridge.selector, namespace: bridge.namespace, port: bridge.port },
}, inNamespaces);

export const agentServerUrls = agentServer.urls;
export const bridgeUrl = bridge.baseUrl;
