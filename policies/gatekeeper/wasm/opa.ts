/** Where the opa command of tools/gatekeeper/build.sh is (for the tests that ask opa itself). */
import { homedir } from "node:os";
import path from "node:path";
import { OPA_VERSION } from "./rule";

export function opaBinary(): string {
    const cache = process.env.OPS_E2E_CACHE ?? path.join(homedir(), ".cache", "ops-e2e");
    return path.join(cache, `opa-${OPA_VERSION}`, "opa");
}
