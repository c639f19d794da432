/**
 * Installs the pinned products into the cache outside the repository (pins.ts): npm packages, Go
 * commands built from the Go module proxy (gobuild.sh) and chdb from PyPI in a venv. Each goes
 * into a temporary place beside its final one, renamed into place only when the install succeeded
 * and the installed version is the pinned one. What is installed is reused. Usage:
 *   tsx tools/products/install.ts [opencode|n8n|minio|mc|oauth2Proxy|chdb ...]
 * Without `go` or python3's venv: those products are skipped with a message (their tests skip),
 * a failure under CI=true.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheRoot, CHDB, chdbDir, chdbPython, GO_PRODUCTS, goBinary, goProductDir, packageDir, PRODUCTS, productDir, type GoProductName, type GoProductPin, type ProductName, type ProductPin } from "./pins";

const MARKER = ".ops-installed";

export function isInstalled(p: ProductPin): boolean {
    return fs.existsSync(path.join(productDir(p), MARKER));
}

export function install(p: ProductPin, log: (s: string) => void = (s) => process.stderr.write(`${s}\n`)): { dir: string; seconds: number; cached: boolean } {
    const dir = productDir(p);
    if (isInstalled(p)) return { dir, seconds: 0, cached: true };
    fs.mkdirSync(cacheRoot(), { recursive: true });
    const tmp = fs.mkdtempSync(path.join(cacheRoot(), `.tmp-${path.basename(dir)}-`));
    const started = Date.now();
    try {
        fs.writeFileSync(path.join(tmp, "package.json"), JSON.stringify({ private: true, ...(p.overrides ? { overrides: p.overrides } : {}) }, null, 2));
        log(`installing ${p.pkg}@${p.version} from npm into ${dir}`);
        execFileSync("npm", ["install", "--no-audit", "--no-fund", "--omit=dev", "--loglevel=error", `${p.pkg}@${p.version}`], { cwd: tmp, stdio: ["ignore", "ignore", "inherit"] });
        const installed = JSON.parse(fs.readFileSync(path.join(tmp, "node_modules", ...p.pkg.split("/"), "package.json"), "utf8")).version;
        if (installed !== p.version) throw new Error(`npm installed ${p.pkg}@${installed}, expected ${p.version}`);
        fs.writeFileSync(path.join(tmp, MARKER), `${p.pkg}@${p.version}\n`);
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(tmp, dir);
    } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        throw new Error(`installing ${p.pkg}@${p.version} failed: ${(e as Error).message}`);
    }
    return { dir, seconds: (Date.now() - started) / 1000, cached: false };
}

const ci = () => process.env.CI === "true";
const recordTime = (what: string, seconds: number) =>
    fs.appendFileSync(path.join(cacheRoot(), "build-times.tsv"), `${new Date().toISOString()}\t${what}\t${seconds.toFixed(1)}s\n`);

/** Why a Go product cannot be built here (no go command), or undefined. */
export function goMissing(): string | undefined {
    try {
        execFileSync("go", ["version"], { stdio: "ignore" });
        return undefined;
    } catch {
        return "the go command is not installed (the Go products are built from the Go module proxy)";
    }
}

/** The proxy's record of a module version: the release commit and its time. */
function goOrigin(p: GoProductPin, env: NodeJS.ProcessEnv): { commit: string; time: string } {
    const out = execFileSync("go", ["mod", "download", "-json", `${p.module}@${p.version}`], { cwd: cacheRoot(), env, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
    const dl = JSON.parse(out);
    if (dl.Error) throw new Error(`${p.module}@${p.version}: ${dl.Error}`);
    const info = JSON.parse(fs.readFileSync(dl.Info, "utf8"));
    const commit = info.Origin?.Hash;
    if (!/^[0-9a-f]{40}$/.test(commit ?? "")) throw new Error(`${p.module}@${p.version}: the proxy gave no commit (Origin.Hash)`);
    return { commit, time: info.Time };
}

/** Builds a Go product from the Go module proxy into the cache (gobuild.sh), unless it is there. */
export function buildGo(p: GoProductPin, log: (s: string) => void = (s) => process.stderr.write(`${s}\n`)): { bin: string; seconds: number; cached: boolean } {
    const bin = goBinary(p);
    if (fs.existsSync(bin)) return { bin, seconds: 0, cached: true };
    const missing = goMissing();
    if (missing) throw new Error(`building ${p.binary} ${p.release}: ${missing}`);
    fs.mkdirSync(cacheRoot(), { recursive: true });
    // GONOSUMDB names this one module only (pins.ts says why); its dependencies stay checked.
    const env = { ...process.env, GOFLAGS: process.env.GOFLAGS || "-buildvcs=false", ...(p.noSumDb ? { GONOSUMDB: p.module } : {}) };
    const started = Date.now();
    const origin = goOrigin(p, env);
    if (p.release.startsWith("RELEASE.") && p.release !== `RELEASE.${origin.time.replace(/:/g, "-")}`)
        throw new Error(`${p.module}@${p.version} is the commit of ${origin.time}, not of ${p.release}`);
    const ldflags = p.ldflags
        .map((f) => f.replace("{time}", origin.time).replace("{commit}", origin.commit).replace("{short}", origin.commit.slice(0, 12)))
        .map((f) => `-X ${f}`).join(" ");
    log(`building ${p.binary} ${p.release} (${p.module}@${p.version}) from the Go module proxy into ${goProductDir(p)}`);
    const wrapperDir = path.join(cacheRoot(), ".src", `${p.binary}-${p.release}`);
    try {
        execFileSync("bash", [path.join(__dirname, "gobuild.sh"), bin, wrapperDir, p.module, p.version, p.pkg, ldflags], { env, stdio: ["ignore", "ignore", "inherit"] });
    } catch (e) {
        throw new Error(`building ${p.binary} ${p.release} failed: ${(e as Error).message}`);
    }
    const seconds = (Date.now() - started) / 1000;
    recordTime(`${p.binary} ${p.release}`, seconds);
    return { bin, seconds, cached: false };
}

/** Why chdb cannot be installed here (no python3 with venv), or undefined. */
export function venvMissing(): string | undefined {
    try {
        execFileSync("python3", ["-m", "venv", "--help"], { stdio: "ignore" });
        return undefined;
    } catch {
        return "python3 with its venv module is not installed (chdb is installed from PyPI into a venv)";
    }
}

/** chdb from PyPI into a venv in the cache, checked to be the pinned version on the pinned engine. */
export function installChdb(log: (s: string) => void = (s) => process.stderr.write(`${s}\n`)): { python: string; seconds: number; cached: boolean } {
    const dir = chdbDir();
    if (fs.existsSync(path.join(dir, MARKER))) return { python: chdbPython(), seconds: 0, cached: true };
    const missing = venvMissing();
    if (missing) throw new Error(`installing chdb ${CHDB.version}: ${missing}`);
    fs.mkdirSync(cacheRoot(), { recursive: true });
    const tmp = fs.mkdtempSync(path.join(cacheRoot(), `.tmp-chdb-${CHDB.version}-`));
    const started = Date.now();
    try {
        log(`installing chdb==${CHDB.version} from PyPI into ${dir}`);
        // The venv is made at its final path's sibling and only its python is used after the
        // rename (a venv's python finds its packages through pyvenv.cfg beside it, wherever it is).
        execFileSync("python3", ["-m", "venv", path.join(tmp, "venv")], { stdio: ["ignore", "ignore", "inherit"] });
        execFileSync(path.join(tmp, "venv", "bin", "python"), ["-m", "pip", "install", "--quiet", "--disable-pip-version-check", "--no-input", `${CHDB.pkg}==${CHDB.version}`], { stdio: ["ignore", "ignore", "inherit"] });
        const got = execFileSync(path.join(tmp, "venv", "bin", "python"), ["-c", "import chdb; print(chdb.__version__); print(chdb.query('SELECT version()', 'CSV'))"], { encoding: "utf8" }).trim().split("\n");
        if (got[0] !== CHDB.version) throw new Error(`pip installed chdb ${got[0]}, expected ${CHDB.version}`);
        if (!got[1].replace(/"/g, "").startsWith(CHDB.engine)) throw new Error(`chdb ${CHDB.version} runs ClickHouse ${got[1]}, expected ${CHDB.engine}`);
        fs.writeFileSync(path.join(tmp, MARKER), `chdb==${CHDB.version}\n`);
        fs.rmSync(dir, { recursive: true, force: true });
        fs.renameSync(tmp, dir);
    } catch (e) {
        fs.rmSync(tmp, { recursive: true, force: true });
        throw new Error(`installing chdb ${CHDB.version} failed: ${(e as Error).message}`);
    }
    const seconds = (Date.now() - started) / 1000;
    recordTime(`chdb ${CHDB.version}`, seconds);
    return { python: chdbPython(), seconds, cached: false };
}

/** The opencode executable of this platform inside the installed opencode-ai (its optional dependency). */
export function opencodeBinary(): string {
    const p = PRODUCTS.opencode;
    const plat = process.platform === "win32" ? "windows" : process.platform;
    const arch = process.arch;
    for (const variant of [`opencode-${plat}-${arch}`, `opencode-${plat}-${arch}-baseline`, `opencode-${plat}-${arch}-musl`]) {
        const bin = path.join(productDir(p), "node_modules", variant, "bin", "opencode");
        if (fs.existsSync(bin)) return bin;
    }
    throw new Error(`no opencode binary for ${plat}-${arch} under ${productDir(p)}`);
}

/** The n8n command-line entry point of the installed n8n. */
export const n8nBinary = () => path.join(packageDir(PRODUCTS.n8n), "bin", "n8n");

if (require.main === module) {
    const known = [...Object.keys(PRODUCTS), ...Object.keys(GO_PRODUCTS), "chdb"];
    const names = process.argv.slice(2).length ? process.argv.slice(2) : known;
    const took = (r: { cached: boolean; seconds: number }) => (r.cached ? "cached" : `installed in ${r.seconds.toFixed(0)} s`);
    for (const name of names) {
        if (name in PRODUCTS) {
            const pin = PRODUCTS[name as ProductName];
            const r = install(pin);
            console.log(`${pin.pkg}@${pin.version}: ${took(r)} (${r.dir})`);
        } else if (name in GO_PRODUCTS) {
            const pin = GO_PRODUCTS[name as GoProductName];
            const missing = fs.existsSync(goBinary(pin)) ? undefined : goMissing();
            if (missing && !ci()) { console.log(`${pin.binary} ${pin.release}: skipped, ${missing}; its tests skip`); continue; }
            const r = buildGo(pin);
            console.log(`${pin.binary} ${pin.release}: ${r.cached ? "cached" : `built in ${r.seconds.toFixed(0)} s`} (${r.bin})`);
        } else if (name === "chdb") {
            const missing = fs.existsSync(path.join(chdbDir(), MARKER)) ? undefined : venvMissing();
            if (missing && !ci()) { console.log(`chdb ${CHDB.version}: skipped, ${missing}; its tests skip`); continue; }
            const r = installChdb();
            console.log(`chdb ${CHDB.version}: ${took(r)} (${r.python})`);
        } else {
            throw new Error(`unknown product ${name} (expected one of ${known.join(", ")})`);
        }
    }
}
