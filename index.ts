/**
 * The operations environment: configuration flows one way, from the typed stack configuration
 * to the components to the Kubernetes objects.
 */
import { loadConfig } from "./config";
import { AgentServer } from "./components/agentServer";
import { Booking } from "./components/booking";
import { Bridge } from "./components/bridge";
import { ColumnStore } from "./components/columnStore";
import { Namespaces } from "./components/namespaces";
import { SearchEngine } from "./components/searchEngine";

const config = loadConfig();

const namespaces = new Namespaces("namespaces", { config });
const inNamespaces = { dependsOn: [namespaces] };

const bridge = new Bridge("bridge", { config }, inNamespaces);
const agentServer = new AgentServer("agent-server", {
    config,
    bridge: { baseUrl: bridge.baseUrl, selector: bridge.selector, namespace: bridge.namespace, port: bridge.port },
}, inNamespaces);

// Applications with their own data: booking (SQLite), search engine (snapshots), column store.
const booking = new Booking("booking", { config }, inNamespaces);
const searchEngine = new SearchEngine("search-engine", { config }, inNamespaces);
const columnStore = new ColumnStore("column-store", { config }, inNamespaces);

export const agentServerUrls = agentServer.urls;
export const bridgeUrl = bridge.baseUrl;
export const bookingUrl = booking.url;
export const searchEngineUrl = searchEngine.url;
export const searchEngineBootstrapJob = searchEngine.bootstrapJobName;
export const columnStoreNodePorts = columnStore.nodePorts;
