/**
 * The whole configuration schema of the project, one area per application or platform part.
 * Pulumi.yaml is generated from it (`npm run gen:project`), and a test keeps the two in sync.
 */
import { agentServer, bridge, gatewayTool } from "./areas/agent";
import { backups } from "./areas/backups";
import { booking } from "./areas/booking";
import { columnStore } from "./areas/columnStore";
import { dataStores, objectStore, postgres, redis } from "./areas/dataStores";
import { environment } from "./areas/environment";
import { gitops } from "./areas/gitops";
import { ingress } from "./areas/ingress";
import { alerts, keyStore, nodeAgent, nodePool } from "./areas/nodes";
import { addons, guardrails, issuers, verticalAutoscaling } from "./areas/platform";
import { searchEngine } from "./areas/searchEngine";
import { volumes } from "./areas/volumes";
import { workflow } from "./areas/workflow";

export const schema = {
    environment,
    ingress,
    agentServer,
    gatewayTool,
    bridge,
    backups,
    dataStores,
    postgres,
    redis,
    objectStore,
    volumes,
    workflow,
    booking,
    searchEngine,
    columnStore,
    guardrails,
    issuers,
    addons,
    verticalAutoscaling,
    gitops,
    nodeAgent,
    nodePool,
    keyStore,
    alerts,
};
