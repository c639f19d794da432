/**
 * The real products `npm run test:products` runs, at the versions the stack config pins (its image
 * tags), and where they are cached: outside the repository, in $OPS_PRODUCTS_CACHE or
 * ~/.cache/ops-products. The agent server and the workflow tool are npm packages
 * (<package>-<version>/); the object store, its client and the OAuth proxy are built from the Go
 * module proxy (<binary>-<release>/<binary>); chdb (the ClickHouse engine as a Python module, for
 * the column store's configuration) is installed from PyPI into a venv (chdb-<version>/venv).
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
     * opencode: the specification's deployment reports 1.2.26, which the npm registry does not list
     * (1.2.20 and 1.2.27 are the neighbours): the agent server image (images/agent-server, from
     * its package-lock.json) and the products test both run 1.2.27, the nearest later patch release.
     */
    opencode: {
        pkg: "opencode-ai",
        version: "1.2.27",
        imageTag: "1.2.27",
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
    /**
     * The official OpenAI SDK for Node: the client nobody here wrote that the bridge's product test
     * drives (test/products/bridge.products.ts), as an application would.
     */
    openaiSdk: {
        pkg: "openai",
        version: "7.55.0",
    },
} as const;

export type ProductName = keyof typeof PRODUCTS;

export const cacheRoot = () => process.env.OPS_PRODUCTS_CACHE || path.join(os.homedir(), ".cache", "ops-products");
export const productDir = (p: ProductPin) => path.join(cacheRoot(), `${p.pkg.replace(/[@/]/g, "_")}-${p.version}`);
export const packageDir = (p: ProductPin, pkg = p.pkg) => path.join(productDir(p), "node_modules", ...pkg.split("/"));

/** A command built from the Go module proxy by module path and version (tools/products/gobuild.sh). */
export interface GoProductPin {
    module: string;
    /** The proxy's version: a tag, or the pseudo-version of the release commit. */
    version: string;
    /** The release the image tag names. */
    release: string;
    /** The package of the command (its `main`). */
    pkg: string;
    binary: string;
    /** -X flags as the product's own release build sets them; {commit} and {time} come from the proxy's record of the version. */
    ldflags: string[];
    /** GONOSUMDB for this one module: the checksum database has no entry for the version. */
    noSumDb?: boolean;
}

export const GO_PRODUCTS = {
    /** MinIO server; ldflags as its buildscripts/gen-ldflags.go writes them for a RELEASE build. */
    minio: {
        module: "github.com/minio/minio",
        version: "v0.0.0-20241107005220-cefc43e4daa4",
        release: "RELEASE.2024-11-07T00-52-20Z",
        pkg: "github.com/minio/minio",
        binary: "minio",
        ldflags: ["cmd.Version={time}", "cmd.ReleaseTag=RELEASE.2024-11-07T00-52-20Z", "cmd.CopyrightYear=2024", "cmd.CommitID={commit}", "cmd.ShortCommitID={short}"].map((f) => `github.com/minio/minio/${f}`),
    },
    /**
     * The MinIO client, as in the backup and provisioning images. The checksum database has no
     * entry for this pseudo-version (its lookup answers 404 Not Found, so `go mod download` refuses
     * it), so the build runs with GONOSUMDB=github.com/minio/mc: this one module unchecked, every
     * dependency still checked against the database.
     */
    mc: {
        module: "github.com/minio/mc",
        version: "v0.0.0-20241121172154-1681e4497c09",
        release: "RELEASE.2024-11-21T17-21-54Z",
        pkg: "github.com/minio/mc",
        binary: "mc",
        ldflags: ["cmd.Version={time}", "cmd.ReleaseTag=RELEASE.2024-11-21T17-21-54Z", "cmd.CopyrightYear=2024", "cmd.CommitID={commit}", "cmd.ShortCommitID={short}"].map((f) => `github.com/minio/mc/${f}`),
        noSumDb: true,
    },
    /** oauth2-proxy; its Makefile sets main.VERSION. */
    oauth2Proxy: {
        module: "github.com/oauth2-proxy/oauth2-proxy/v7",
        version: "v7.6.0",
        release: "v7.6.0",
        pkg: "github.com/oauth2-proxy/oauth2-proxy/v7",
        binary: "oauth2-proxy",
        ldflags: ["main.VERSION=v7.6.0"],
    },
} as const satisfies Record<string, GoProductPin>;

export type GoProductName = keyof typeof GO_PRODUCTS;

/**
 * chdb from PyPI: 2.1.1 embeds the ClickHouse 24.8 engine (its SELECT version() says 24.8.4.1;
 * chdb's own change "Update ClickHouse engine to v24.8.4.13-lts"), the column store image's release.
 */
export const CHDB = { pkg: "chdb", version: "2.1.1", engine: "24.8.4" } as const;

export const goProductDir = (p: GoProductPin) => path.join(cacheRoot(), `${p.binary}-${p.release}`);
export const goBinary = (p: GoProductPin) => path.join(goProductDir(p), p.binary);
export const chdbDir = () => path.join(cacheRoot(), `chdb-${CHDB.version}`);
export const chdbPython = () => path.join(chdbDir(), "venv", "bin", "python");
