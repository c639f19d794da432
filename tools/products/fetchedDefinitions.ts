/**
 * Settings of the two products this repository takes from public source rather than from a
 * package registry: the model bridge (opencode-bridge) and the gateway admin tool server
 * (sub2api-admin). Recorded by hand from the product's source at the commit each file names
 * (tools/products/definitions/opencode-bridge.json, sub2api-admin.json); `npm test` checks the
 * render against them, and test/products/fetched.products.ts re-reads the names from a copy of the
 * sources when one is given (OPS_BRIDGE_SOURCE, OPS_SUB2API_ADMIN_SOURCE).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { DEFINITIONS_DIR } from "./definitions";

export interface FetchedDefinition {
    product: "opencode-bridge" | "sub2api-admin";
    source: { repository: string; commit: string; path: string };
    env: Record<string, { default?: string; required?: boolean | string; rule?: string }>;
    routes?: string[];
    tools?: string[];
}

export function loadFetchedDefinition(product: FetchedDefinition["product"]): FetchedDefinition {
    return JSON.parse(fs.readFileSync(path.join(DEFINITIONS_DIR, `${product}.json`), "utf8"));
}

/** The environment names a JavaScript source reads as process.env.NAME. */
export const processEnvReads = (text: string) => [...new Set([...text.matchAll(/process\.env\.([A-Z][A-Z0-9_]*)/g)].map((m) => m[1]))].sort();
