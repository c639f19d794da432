/**
 * The operations environment: configuration flows one way, from the typed stack configuration
 * to the components to the Kubernetes objects. `main()` registers every resource and returns the
 * stack outputs; index.ts runs it (the CLI and the offline render), and the e2e runs it as the
 * Automation API's inline program (tools/e2e/engine.ts).
 */
import * as pulumi from "@pulumi/pulumi";
import { loadConfig } from "./config";
import { addonNamespaces, applicationNamespaces, ownedNamespaces } from "./config/apiServerRules";
import { AgentServer } from "./components/agentServer";
import { Booking } from "./components/booking";
import { Bridge } from "./components/bridge";
import { ColumnStore } from "./components/columnStore";
import { Namespaces } from "./components/namespaces";
import { placedInOwnNamespace } from "./components/lib/engineOrder";
import { CLAIM_ORDINALS_OUTPUT, CLAIM_SIZES_OUTPUT, ClaimGuard } from "./components/lib/claimGuard";
import { keyOf } from "./config/schema";
import { programOwned } from "./components/lib/fieldOwnership";
import { DECLARED_FLOWS_FILE, declaredFlowsJson, resetDeclaredFlows } from "./components/lib/network";
import { AdmissionPolicies } from "./components/platform/admissionPolicies";
import { Addons } from "./components/platform/addons";
import { GitOps } from "./components/platform/gitops";
import { Issuers } from "./components/platform/issuers";
import { Monitoring } from "./components/platform/monitoring";
import { keyStoreFlags, kubeletConfiguration, nodeFiles } from "./components/platform/nodeSettings";
import { VerticalAutoscalers } from "./components/platform/verticalAutoscalers";
import { ObjectStore } from "./components/objectStore";
import { Postgres } from "./components/postgres";
import { Redis } from "./components/redis";
import { SearchEngine } from "./components/searchEngine";
import { SourceMirror } from "./components/sourceMirror";
import { Workflow, workflowDatabaseClients, workflowQueueClients, workflowStoreSecrets } from "./components/workflow";

export function main() {
    const config = loadConfig();
    // The flows components declare (components/lib/network.ts), collected afresh for this run.
    resetDeclaredFlows();
    // The data volume sizes of this run, judged against the last deploy's (components/lib/claimGuard.ts).
    const volumeGuard = new ClaimGuard({ namespaces: [...applicationNamespaces(config), ...addonNamespaces(config)], released: config.volumes.released, releasedKey: keyOf(["volumes", "released"]) });

    // One namespace per area, each with its guardrails; the add-ons the applications rely on. Every object of
    // the program takes back fields another manager changed (components/lib/fieldOwnership.ts).
    const namespaces = new Namespaces("namespaces", {
        config,
        names: ownedNamespaces(config),
    }, programOwned());
    // The same rule catalogue at admission, for what Argo CD and people create (issue 12).
    const admissionPolicies = new AdmissionPolicies("admission-policies", { config, stack: pulumi.getStack() }, programOwned());
    const addons = new Addons("addons", { config, namespace: (name) => namespaces.namespace(name) }, programOwned());
    // Each application object waits for its own namespace's guardrails, an Ingress also for the ingress
    // controller whose webhook admits it (components/lib/engineOrder.ts), not for the whole of both.
    const inNamespaces = programOwned({
        transformations: [placedInOwnNamespace({ guardrails: (ns) => namespaces.guardrails(ns), everyNamespace: namespaces, ingressController: addons.charts.ingressNginx })],
    });

    // The model bridge is in front of the agent server: it forwards to the instance on bridgeAgentServerPort.
    const bridge = new Bridge("bridge", { config }, inNamespaces);
    const agentServer = new AgentServer("agent-server", { config, bridge: { selector: bridge.selector, namespace: bridge.namespace } }, inNamespaces);

    // Data stores and the workflow tool that uses them.
    const postgres = new Postgres("postgres", {
        config,
        volumeGuard,
        databases: [{ name: config.workflow.database, namespace: config.workflow.namespace, secretName: workflowStoreSecrets.postgres, clients: workflowDatabaseClients(config) }],
    }, inNamespaces);
    const redis = new Redis("redis", {
        config,
        volumeGuard,
        clients: workflowQueueClients(config),
        credentialSecrets: [{ namespace: config.workflow.namespace, secretName: workflowStoreSecrets.redis }],
    }, inNamespaces);
    const objectStore = new ObjectStore("object-store", {
        config,
        volumeGuard,
        // The search engine nodes (components/searchEngine.ts labels them name search-engine, component
        // node), only when their snapshot repository is the object store: an fs repository needs no flow.
        clients: config.searchEngine.snapshot.type === "s3"
            ? [{ namespace: config.searchEngine.namespace, selector: { "app.kubernetes.io/name": "search-engine", "app.kubernetes.io/component": "node" }, description: "the search engine nodes (s3 snapshot repository)" }]
            : [],
    }, inNamespaces);
    const workflow = new Workflow("workflow", {
        config,
        volumeGuard,
        postgres: { host: postgres.host, port: postgres.port, namespace: postgres.namespace, selector: postgres.selector, database: config.workflow.database, secretName: workflowStoreSecrets.postgres },
        redis: { host: redis.host, port: redis.port, namespace: redis.namespace, selector: redis.selector, secretName: workflowStoreSecrets.redis },
    }, { ...inNamespaces, dependsOn: [...postgres.readyForClients, ...redis.readyForClients] });

    // Applications with their own data: booking (SQLite), search engine (snapshots), column store.
    const booking = new Booking("booking", { config }, inNamespaces);
    // Snapshots to the object store need its bucket and credentials first; a file-system repository needs nothing of it.
    const searchEngine = new SearchEngine("search-engine", { config, volumeGuard }, config.searchEngine.snapshot.type === "s3" ? { ...inNamespaces, dependsOn: objectStore.readyForClients } : inNamespaces);
    const columnStore = new ColumnStore("column-store", { config, volumeGuard }, inNamespaces);

    // The platform on top: issuers, vertical autoscalers, GitOps, alerts (each after the add-on whose CRDs it needs).
    const issuers = new Issuers("issuers", { config, certManager: addons.charts.certManager }, programOwned());
    new VerticalAutoscalers("vertical-autoscalers", { config, vpa: addons.charts.vpa }, inNamespaces);
    const gitops = new GitOps("gitops", { config, argoCd: addons.charts.argoCd, namespace: (name) => namespaces.namespace(name) }, programOwned());
    new Monitoring("monitoring", { config, monitoring: addons.charts.monitoring }, programOwned());
    // Source repositories (section 8.3): mirror clones with the GitOps deploy key.
    new SourceMirror("source-mirror", { config }, programOwned({ dependsOn: [gitops] }));

    return {
        agentServerUrls: agentServer.urls,
        bridgeUrl: bridge.baseUrl,
        workflowEditorUrl: workflow.editorUrl,
        workflowWebhookUrl: workflow.webhookUrl,
        objectStoreEndpoint: objectStore.endpoint,
        bookingUrl: booking.url,
        searchEngineUrl: searchEngine.url,
        searchEngineBootstrapJob: searchEngine.bootstrapJobName,
        columnStoreNodePorts: columnStore.nodePorts,
        admissionPolicyNames: admissionPolicies.policyNames,
        caCertificate: issuers.caCertificatePem,
        gitopsDeployPublicKey: gitops.deployPublicKey,
        // Node agent and key-store settings cannot be applied through the API: published for the node provisioning.
        nodeSettings: { kubelet: kubeletConfiguration(config), keyStore: keyStoreFlags(config) },
        /** Files the render writes next to the manifests (cli/harness/render.ts); the declared flows feed `npm run explain`. */
        /** Each growable StatefulSet's volume sizes and claims: the next run judges its changes against them (components/lib/claimGuard.ts). */
        [CLAIM_SIZES_OUTPUT]: volumeGuard.declaredSizes(),
        [CLAIM_ORDINALS_OUTPUT]: volumeGuard.declaredOrdinals(),
        renderedFiles: { ...nodeFiles(config), [DECLARED_FLOWS_FILE]: declaredFlowsJson() },
    };
}
