/**
 * Installs the pinned products from npm into the cache outside the repository (pins.ts): each into
 * a temporary folder beside its final place, renamed into place only when npm succeeded and the
 * installed version is the pinned one. An installed product is reused. Usage:
 *   tsx tools/products/install.ts [opencode|n8n ...]
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { cacheRoot, packageDir, PRODUCTS, productDir, type ProductName, type ProductPin } from "./pins";

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
    const names = (process.argv.slice(2).length ? process.argv.slice(2) : Object.keys(PRODUCTS)) as ProductName[];
    for (const name of names) {
        const pin = PRODUCTS[name];
        if (!pin) throw new Error(`unknown product ${name} (expected one of ${Object.keys(PRODUCTS).join(", ")})`);
        const r = install(pin);
        console.log(`${pin.pkg}@${pin.version}: ${r.cached ? "cached" : `installed in ${r.seconds.toFixed(0)} s`} (${r.dir})`);
    }
}
