/**
 * What the real products read, extracted from the pinned packages themselves (pins.ts), and the
 * committed copy the fast tests use (tools/products/definitions/*.json, written by
 * `tsx tools/products/genDefinitions.ts`, compared again by `npm run test:products`).
 *
 * n8n 1.68.0: the environment names of @n8n/config's @Env decorators, of n8n's own config schema
 *   (packages/cli config/schema.ts, convict `env:`), and every `process.env.NAME` read in the n8n
 *   and n8n-core packages (N8N_ENCRYPTION_KEY, N8N_USER_FOLDER, WEBHOOK_URL ...); its CLI commands
 *   (dist/commands/<topic>/<name>.js => topic:name) and each command's flags.
 * opencode: every environment name its bundled JavaScript reads (src/flag/flag.ts's Flag names,
 *   xdg-basedir's XDG_*, ...), the proxy variables Bun's native fetch reads, the `serve` flags,
 *   and its configuration JSON schema, as its own server publishes it (GET /doc, components
 *   Config and what it references).
 */
import { execFileSync, spawn } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { opencodeBinary } from "./install";
import { packageDir, PRODUCTS } from "./pins";

export interface N8nDefinition {
    product: "n8n";
    version: string;
    configPackage: string;
    env: { "@n8n/config": string[]; "n8n config schema": string[]; "process.env": string[] };
    commands: Record<string, string[]>;
}

export interface OpencodeDefinition {
    product: "opencode";
    version: string;
    env: { bundle: string[]; "bun runtime": string[] };
    serveFlags: string[];
    configSchema: Record<string, unknown>;
}

export const DEFINITIONS_DIR = path.join(__dirname, "definitions");
export const definitionFile = (product: "n8n" | "opencode") => path.join(DEFINITIONS_DIR, `${product}.json`);

export function loadDefinition(product: "n8n"): N8nDefinition;
export function loadDefinition(product: "opencode"): OpencodeDefinition;
export function loadDefinition(product: "n8n" | "opencode") {
    return JSON.parse(fs.readFileSync(definitionFile(product), "utf8"));
}

/** Every name of an n8n definition. */
export const n8nEnvNames = (d: N8nDefinition) => new Set(Object.values(d.env).flat());
export const opencodeEnvNames = (d: OpencodeDefinition) => new Set(Object.values(d.env).flat());

const sorted = (s: Iterable<string>) => [...new Set(s)].sort();

function jsFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true, recursive: true })
        .filter((e) => e.isFile() && e.name.endsWith(".js"))
        .map((e) => path.join(e.parentPath ?? (e as unknown as { path: string }).path, e.name));
}

function matchAll(texts: string[], re: RegExp): string[] {
    const out: string[] = [];
    for (const t of texts) for (const m of t.matchAll(re)) out.push(m[1]);
    return out;
}

const PROCESS_ENV = /process\.env(?:\.([A-Z][A-Z0-9_]*)\b|\[['"]([A-Z][A-Z0-9_]*)['"]\])/g;
function processEnvNames(texts: string[]): string[] {
    const out: string[] = [];
    for (const t of texts) for (const m of t.matchAll(PROCESS_ENV)) out.push(m[1] ?? m[2]);
    return out;
}

export function extractN8n(): N8nDefinition {
    const pin = PRODUCTS.n8n;
    const configDir = packageDir(pin, pin.configPkg);
    const configVersion = JSON.parse(fs.readFileSync(path.join(configDir, "package.json"), "utf8")).version;
    if (configVersion !== pin.configVersion) throw new Error(`${pin.configPkg} ${configVersion} installed, pins.ts says ${pin.configVersion}`);
    const configTexts = jsFiles(path.join(configDir, "dist")).map((f) => fs.readFileSync(f, "utf8"));
    const cliDist = path.join(packageDir(pin), "dist");
    const coreDist = path.join(packageDir(pin, "n8n-core"), "dist");
    const schema = fs.readFileSync(path.join(cliDist, "config", "schema.js"), "utf8");
    const commandsDir = path.join(cliDist, "commands");
    const commands: Record<string, string[]> = {};
    for (const f of jsFiles(commandsDir)) {
        const rel = path.relative(commandsDir, f).replace(/\.js$/, "");
        if (rel === "base-command") continue;
        const text = fs.readFileSync(f, "utf8");
        const block = text.match(/\.flags = \{([\s\S]*?)\n\};/)?.[1] ?? "";
        commands[rel.split(path.sep).join(":")] = sorted(matchAll([block], /^\s+(\w+): core_1\.Flags\./gm));
    }
    return {
        product: "n8n",
        version: pin.version,
        configPackage: `${pin.configPkg}@${configVersion}`,
        env: {
            "@n8n/config": sorted(matchAll(configTexts, /Env\)\('([A-Z][A-Z0-9_]*)'/g)),
            "n8n config schema": sorted(matchAll([schema], /env: '([A-Z][A-Z0-9_]*)'/g)),
            "process.env": sorted(processEnvNames([...jsFiles(cliDist), ...jsFiles(coreDist)].map((f) => fs.readFileSync(f, "utf8")))),
        },
        commands: Object.fromEntries(Object.entries(commands).sort(([a], [b]) => a.localeCompare(b))),
    };
}

/** Proxy variables read natively by the Bun runtime opencode is compiled with (not in its JavaScript). */
const BUN_RUNTIME_ENV = ["HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "no_proxy"];

function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
        const s = net.createServer();
        s.once("error", reject);
        s.listen(0, "127.0.0.1", () => {
            const port = (s.address() as net.AddressInfo).port;
            s.close(() => resolve(port));
        });
    });
}

/** Standalone JSON schema (draft 2020-12) of opencode's Config from its OpenAPI document. */
export function configSchemaFromOpenApi(doc: { components: { schemas: Record<string, unknown> } }): Record<string, unknown> {
    const all = doc.components.schemas;
    const need = new Set<string>();
    const visit = (name: string) => {
        if (need.has(name)) return;
        if (!(name in all)) throw new Error(`opencode's OpenAPI document has no schema ${name}`);
        need.add(name);
        for (const m of JSON.stringify(all[name]).matchAll(/"#\/components\/schemas\/([^"]+)"/g)) visit(m[1]);
    };
    visit("Config");
    const defs = Object.fromEntries([...need].sort().map((n) => [n, JSON.parse(JSON.stringify(all[n]).replace(/#\/components\/schemas\//g, "#/$defs/"))]));
    return { $schema: "https://json-schema.org/draft/2020-12/schema", $ref: "#/$defs/Config", $defs: defs };
}

export async function extractOpencode(): Promise<OpencodeDefinition> {
    const pin = PRODUCTS.opencode;
    const bin = opencodeBinary();
    const version = execFileSync(bin, ["--version"], { encoding: "utf8" }).trim();
    if (version !== pin.version) throw new Error(`opencode --version says ${version}, pins.ts says ${pin.version}`);
    // The JavaScript bundled into the executable is stored as text: read it as such.
    const text = fs.readFileSync(bin).toString("latin1");
    const flagHelpers = matchAll([text], /\b(?:truthy|falsy|number\d*)\("([A-Z][A-Z0-9_]*)"\)/g);
    const xdg = matchAll([text], /\benv\.(XDG_[A-Z_]+)\b/g);
    const runtime = BUN_RUNTIME_ENV.filter((n) => text.includes(n));
    const help = execFileSync(bin, ["serve", "--help"], { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } });
    const serveFlags = sorted(matchAll([help], /^\s+(?:-\w, )?--([a-z][a-z-]*)/gm));
    // Its configuration schema, as its own server publishes it.
    const home = fs.mkdtempSync(path.join(require("node:os").tmpdir(), "opencode-schema-"));
    const port = await freePort();
    const child = spawn(bin, ["serve", "--port", String(port), "--hostname", "127.0.0.1"], {
        env: { PATH: process.env.PATH, HOME: home, OPENCODE_DISABLE_MODELS_FETCH: "1", OPENCODE_DISABLE_AUTOUPDATE: "1" },
        cwd: home,
        stdio: "ignore",
    });
    try {
        let doc: { components: { schemas: Record<string, unknown> } } | undefined;
        for (let i = 0; i < 120 && !doc; i++) {
            await new Promise((r) => setTimeout(r, 250));
            try {
                const res = await fetch(`http://127.0.0.1:${port}/doc`);
                if (res.ok) doc = await res.json() as typeof doc;
            } catch { /* not up yet */ }
        }
        if (!doc) throw new Error("opencode serve did not answer GET /doc within 30 s");
        return {
            product: "opencode",
            version,
            env: { bundle: sorted([...processEnvNames([text]), ...flagHelpers, ...xdg]), "bun runtime": runtime },
            serveFlags,
            configSchema: configSchemaFromOpenApi(doc),
        };
    } finally {
        child.kill("SIGTERM");
        fs.rmSync(home, { recursive: true, force: true });
    }
}
