/**
 * The whole configuration schema of the project, one area per application or platform part.
 * Pulumi.yaml is generated from it (`npm run gen:project`), and a test keeps the two in sync.
 */
import { agentServer, bridge, gatewayTool } from "./areas/agent";
import { backups } from "./areas/backups";
import { booking } from "./areas/booking";
import { columnStore } from "./areas/columnStore";
import { environment } from "./areas/environment";
import { ingress } from "./areas/ingress";
import { searchEngine } from "./areas/searchEngine";

export const schema = {
    environment,
    ingress,
    agentServer,
    gatewayTool,
    bridge,
    backups,
    booking,
    searchEngine,
    columnStore,
};
