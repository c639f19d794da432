/**
 * The program the pulumi CLI runs (Pulumi.yaml main): main.ts registers the environment, and its
 * outputs are this module's exports, which the Node.js runtime publishes as the stack outputs.
 */
import { main } from "./main";

export = main();
