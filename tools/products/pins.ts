/**
 * The real products behind the agent server and the workflow tool, as npm packages at the versions
 * the stack config pins (its image tags), and where `npm run test:products` caches them: outside
 * the repository, in $OPS_PRODUCTS_CACHE or ~/.cache/ops-products/<package>-<version>.
 */
import * as os from "node:os";
import * as path from "node:path";

export interface ProductPin {
    /** The npm package that ships the product. */
    pkg: string;
    version: string;
    /** Extra top-level entries of the install's package.json (npm overrides). */
    overrides?: Record<string, string>;
    /** Why the npm version differs from the image tag, when it does. */
    note?: string;
}

export const PRODUCTS = {
    /**
     * opencode: the image pins 1.2.26 (the deployed version of the specification), which the npm
     * registry does not list (1.2.20 and 1.2.27 are the neighbours): the products test runs 1.2.27,
     * the nearest later patch release.
     */
    opencode: {
        pkg: "opencode-ai",
        version: "1.2.27",
        imageTag: "1.2.26",
        note: "npm lists no opencode-ai 1.2.26; 1.2.27 is the nearest later patch release",
    },
    /**
     * n8n: exactly the image's version. n8n-nodes-base 1.68.0 depends on xlsx by a URL on
     * cdn.sheetjs.com, which only package registries reach here: the install replaces it by the
     * last xlsx on npm (0.18.5). Only the spreadsheet nodes use it; nothing the test runs does.
     */
    n8n: {
        pkg: "n8n",
        version: "1.68.0",
        imageTag: "1.68.0",
        configPkg: "@n8n/config",
        configVersion: "1.18.0",
        overrides: { xlsx: "npm:xlsx@0.18.5" },
    },
} as const;

export type ProductName = keyof typeof PRODUCTS;

export const cacheRoot = () => process.env.OPS_PRODUCTS_CACHE || path.join(os.homedir(), ".cache", "ops-products");
export const productDir = (p: ProductPin) => path.join(cacheRoot(), `${p.pkg.replace(/[@/]/g, "_")}-${p.version}`);
export const packageDir = (p: ProductPin, pkg = p.pkg) => path.join(productDir(p), "node_modules", ...pkg.split("/"));
