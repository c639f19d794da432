/**
 * The program the pulumi CLI runs (Pulumi.yaml main): main.ts registers the environment, and its
 * outputs are this module's export (a promise, which the Node.js runtime awaits: @pulumi/pulumi
 * cmd/run/run.js), published as the stack outputs.
 */
import { main } from "./main";

export = main();
