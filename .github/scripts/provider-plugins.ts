/**
 * Installs the Pulumi resource plugins the program asks for, from checked sources, in a workflow
 * job before any credential is in it (`pulumi preview`/`up` would otherwise fetch them from
 * get.pulumi.com at run time without a checksum; the pulumi steps also set
 * PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION, so a plugin missing here fails them instead):
 *
 *   npm run -s provider-plugins [-- --node-modules <folder>]
 *
 * The plugins are the ones node_modules' packages declare (package.json "pulumi": {"resource":
 * true, "name", "version"}), which is what the Node.js language host reports to the engine. Each
 * must be in PROVIDERS, which says how it is checked:
 * - "proxy": built from the Go module proxy at the pseudo-version of its release tag's commit (the
 *   Go checksum database checks the source) by tools/e2e/build.sh, which records that version
 *   (kubernetes: KUBERNETES_PROVIDER_VERSION and KUBERNETES_PROVIDER_MODULE in tools/e2e/lib.sh).
 * - "release": the release tarball pulumi itself would download (get.pulumi.com), installed only
 *   when its checksum is the one line the checksums file of the same tag's GitHub release lists
 *   for it (another host; Pulumi's publish workflow writes that file with `shasum`, SHA-1). random
 *   and tls cannot be built from the module proxy: their provider module replaces its shim module
 *   by a folder of the repository, which no module download contains.
 * Then `pulumi plugin install resource <name> <version> --file <file>`. A plugin not in PROVIDERS,
 * a version other than the one recorded for a "proxy" plugin, a checksums file without exactly
 * one line for the tarball, or a mismatch: an error naming it, exit 1, nothing of it installed.
 */
import { createHash } from "node:crypto";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";

type Check = { kind: "proxy" } | { kind: "release"; repo: string };
/** The resource plugins the program may ask for, and how each is checked. */
export const PROVIDERS: Record<string, Check> = {
    kubernetes: { kind: "proxy" },
    random: { kind: "release", repo: "pulumi/pulumi-random" },
    tls: { kind: "release", repo: "pulumi/pulumi-tls" },
};

const ROOT = path.resolve(__dirname, "..", "..");
const VERSION = /^\d+\.\d+\.\d+$/;

export interface Plugin { name: string; version: string; from: string }

/** The resource plugins node_modules' packages declare, one per name and version. */
export function requiredPlugins(nodeModules: string): Plugin[] {
    const found = new Map<string, Plugin>();
    const visit = (dir: string) => {
        let entries: string[];
        try { entries = fs.readdirSync(dir); } catch { return; }
        for (const e of entries) {
            if (e.startsWith(".")) continue;
            const pkg = path.join(dir, e);
            if (e.startsWith("@")) { visit(pkg); continue; }
            let meta: { pulumi?: { resource?: boolean; name?: string; version?: string } };
            try { meta = JSON.parse(fs.readFileSync(path.join(pkg, "package.json"), "utf8")); } catch { continue; }
            const p = meta.pulumi;
            if (p?.resource) {
                const file = path.relative(ROOT, path.join(pkg, "package.json"));
                if (!p.name || !/^[a-z0-9-]+$/.test(p.name)) throw new Error(`${file}: pulumi.name ${JSON.stringify(p.name)}: expected a plugin name (lowercase letters, digits, -)`);
                const version = String(p.version ?? "").replace(/^v/, "");
                if (!VERSION.test(version)) throw new Error(`${file}: pulumi.version ${JSON.stringify(p.version)}: expected a release version like 4.25.0`);
                found.set(`${p.name}@${version}`, { name: p.name, version, from: file });
            }
            visit(path.join(pkg, "node_modules"));
        }
    };
    visit(nodeModules);
    return [...found.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/** tools/e2e/lib.sh's recorded kubernetes provider: its version and module pseudo-version. */
function recordedKubernetes(): { version: string; module: string } {
    const lib = fs.readFileSync(path.join(ROOT, "tools", "e2e", "lib.sh"), "utf8");
    const get = (name: string) => new RegExp(`^${name}=(\\S+)`, "m").exec(lib)?.[1] ?? "";
    return { version: get("KUBERNETES_PROVIDER_VERSION"), module: get("KUBERNETES_PROVIDER_MODULE") };
}

/** The one line of a checksums file for `file` ("<hex>  [./]file"): its algorithm and digest. */
export function listedChecksum(text: string, file: string): { algorithm: "sha1" | "sha256"; digest: string } {
    const lines = text.split("\n").map((l) => l.trim().split(/\s+/)).filter((w) => w.length === 2 && w[1].replace(/^\.\//, "").replace(/^\*/, "") === file);
    if (lines.length !== 1) throw new Error(`lists ${lines.length} checksums for ${file}; expected exactly one`);
    const digest = lines[0][0].toLowerCase();
    if (/^[0-9a-f]{64}$/.test(digest)) return { algorithm: "sha256", digest };
    if (/^[0-9a-f]{40}$/.test(digest)) return { algorithm: "sha1", digest };
    throw new Error(`lists ${JSON.stringify(lines[0][0])} for ${file}; expected a SHA-1 or SHA-256 digest in hex`);
}

async function download(url: string, dest: string): Promise<void> {
    let last: unknown;
    for (let attempt = 1; attempt <= 3; attempt++) {
        try {
            const r = await fetch(url, { redirect: "follow" });
            if (!r.ok) throw new Error(`HTTP ${r.status}`);
            fs.writeFileSync(dest, Buffer.from(await r.arrayBuffer()));
            return;
        } catch (e) {
            last = e;
        }
    }
    throw new Error(`${url}: ${(last as Error).message}`);
}

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): string {
    const r = spawnSync(cmd, args, { env, encoding: "utf8", stdio: ["ignore", "pipe", "inherit"], maxBuffer: 16 << 20 });
    if (r.error) throw new Error(`${cmd}: ${r.error.message}`);
    if (r.status !== 0) throw new Error(`${cmd} ${args.join(" ")} exited ${r.status}`);
    return r.stdout;
}

/** PATH with a Go toolchain: `go` on PATH, else the newest of the runner's GOROOT_<major>_<minor>_X64. */
function pathWithGo(): string {
    const PATH = process.env.PATH ?? "";
    if (spawnSync("go", ["version"], { stdio: "ignore" }).status === 0) return PATH;
    const roots = Object.entries(process.env).filter(([k]) => /^GOROOT_\d+_\d+_X64$/.test(k)).sort(([a], [b]) => b.localeCompare(a, undefined, { numeric: true }));
    if (roots.length === 0) throw new Error("no Go toolchain: go is not on PATH and no GOROOT_<version>_X64 is set");
    return `${roots[0][1]}/bin:${PATH}`;
}

const sha256 = (file: string) => createHash("sha256").update(fs.readFileSync(file)).digest("hex");

/** Fetches or builds one plugin, checked; returns the file to install and a line for the summary. */
async function checkedPlugin(p: Plugin, work: string): Promise<{ file: string; said: string }> {
    const check = PROVIDERS[p.name];
    if (!check) throw new Error(`${p.from}: the resource plugin ${p.name} ${p.version} has no checked source in .github/scripts/provider-plugins.ts (PROVIDERS); add how it is checked before using it`);
    if (check.kind === "proxy") {
        const recorded = recordedKubernetes();
        if (p.name !== "kubernetes" || p.version !== recorded.version) throw new Error(`${p.from}: ${p.name} ${p.version}, but tools/e2e/lib.sh records the kubernetes provider ${recorded.version} (module ${recorded.module}); record the pseudo-version of the new release tag's commit there`);
        // OPS_E2E_CACHE: where tools/e2e/build.sh keeps what it built (a developer's machine reuses it).
        const cache = process.env.OPS_E2E_CACHE || path.join(work, "proxy");
        // build.sh exits 1 after building when the rest of the e2e toolchain is not in the cache: the binary decides.
        const built = spawnSync("bash", [path.join(ROOT, "tools", "e2e", "build.sh"), "provider"], { env: { ...process.env, OPS_E2E_CACHE: cache, PATH: pathWithGo() }, stdio: ["ignore", "inherit", "inherit"] });
        const file = path.join(cache, `pulumi-resource-kubernetes-${p.version}`, "pulumi-resource-kubernetes");
        if (!fs.existsSync(file)) throw new Error(`tools/e2e/build.sh provider (exit ${built.status}) left no ${file}: the kubernetes provider was not built`);
        return { file, said: `built from the Go module proxy at github.com/pulumi/pulumi-kubernetes/provider/v4@${recorded.module} (sha256 of the binary ${sha256(file)})` };
    }
    const platform = `${process.platform === "win32" ? "windows" : process.platform}-${process.arch === "x64" ? "amd64" : process.arch}`;
    const tarball = `pulumi-resource-${p.name}-v${p.version}-${platform}.tar.gz`;
    const releases = process.env.OPS_PLUGIN_RELEASES ?? "https://get.pulumi.com/releases/plugins";
    const github = process.env.OPS_PLUGIN_GITHUB ?? "https://github.com";
    const listName = `${check.repo.split("/")[1]}_${p.version}_checksums.txt`;
    const listUrl = `${github}/${check.repo}/releases/download/v${p.version}/${listName}`;
    const file = path.join(work, tarball);
    const list = path.join(work, listName);
    await download(listUrl, list);
    let listed: ReturnType<typeof listedChecksum>;
    try {
        listed = listedChecksum(fs.readFileSync(list, "utf8"), tarball);
    } catch (e) {
        throw new Error(`${listUrl} ${(e as Error).message}: ${p.name} ${p.version} not installed`);
    }
    await download(`${releases}/${tarball}`, file);
    const actual = createHash(listed.algorithm).update(fs.readFileSync(file)).digest("hex");
    if (actual !== listed.digest) throw new Error(`${tarball} from ${releases} has the ${listed.algorithm} ${actual}, not the ${listed.digest} its GitHub release lists (${listUrl}): not installed`);
    return { file, said: `${tarball} from ${releases}, ${listed.algorithm} ${actual} as listed by ${listUrl}` };
}

export async function installPlugins(nodeModules: string, work: string): Promise<string[]> {
    const plugins = requiredPlugins(nodeModules);
    if (plugins.length === 0) throw new Error(`${nodeModules}: no package declares a resource plugin; run npm ci first`);
    const said: string[] = [];
    for (const p of plugins) {
        const { file, said: how } = await checkedPlugin(p, work);
        run("pulumi", ["plugin", "install", "resource", p.name, p.version, "--file", file, "--reinstall"]);
        said.push(`resource plugin ${p.name} ${p.version}: ${how}`);
    }
    return said;
}

async function main(): Promise<number> {
    const work = fs.mkdtempSync(path.join(process.env.RUNNER_TEMP ?? os.tmpdir(), "provider-plugins-"));
    try {
        const i = process.argv.indexOf("--node-modules");
        const said = await installPlugins(i > 0 ? path.resolve(process.argv[i + 1]) : path.join(ROOT, "node_modules"), work);
        for (const line of said) console.log(line);
        if (process.env.GITHUB_STEP_SUMMARY) fs.appendFileSync(process.env.GITHUB_STEP_SUMMARY, said.map((l) => `${l}\n`).join(""));
        return 0;
    } catch (e) {
        console.error(`::error::${(e as Error).message}`);
        return 1;
    } finally {
        fs.rmSync(work, { recursive: true, force: true });
    }
}

if (require.main === module) main().then((code) => process.exit(code));
