/**
 * The e2e's chart repository on loopback: an HTTP server in the driver's process serving
 * index.yaml and one <name>-<version>.tgz per chart. The stacks install every add-on as a
 * helm.v3.Release from its chart repository, unreachable here: each stack's copy points every
 * add-on at this one. It serves, at each pinned chart name and version, an empty STAND-IN chart
 * (the CRDs their dependents need come from the crds step), plus the chart of the hooks step
 * (tools/e2e/charts/hooked).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as http from "node:http";
import * as path from "node:path";
import * as YAML from "yaml";
import type { Context } from "./context";

export interface ChartEntry {
    name: string;
    version: string;
    /** "stand-in", "e2e" (a chart of tools/e2e/charts), or where the real chart's source came from. */
    origin: string;
    file: string;
}

export class ChartRepo {
    readonly dir: string;
    readonly charts: ChartEntry[] = [];
    private server?: http.Server;
    port = 0;

    constructor(private readonly ctx: Context) {
        this.dir = ctx.path("charts");
        fs.mkdirSync(path.join(this.dir, "src"), { recursive: true });
    }

    get url(): string {
        return `http://127.0.0.1:${this.port}`;
    }

    /** Packs a chart folder (its Chart.yaml names it) as <name>-<version>.tgz. */
    async addFolder(folder: string, origin: string): Promise<ChartEntry> {
        const meta = YAML.parse(fs.readFileSync(path.join(folder, "Chart.yaml"), "utf8")) as { name: string; version: string };
        const file = `${meta.name}-${meta.version}.tgz`;
        await this.ctx.run("tar", ["-C", path.dirname(folder), "-czf", path.join(this.dir, file), path.basename(folder)]);
        const entry = { name: meta.name, version: meta.version, origin, file };
        this.charts.push(entry);
        return entry;
    }

    /** An empty chart named and versioned as a pin: no objects. */
    async addStandIn(name: string, version: string): Promise<ChartEntry> {
        const folder = path.join(this.dir, "src", name);
        fs.mkdirSync(folder, { recursive: true });
        fs.writeFileSync(path.join(folder, "Chart.yaml"), YAML.stringify({
            apiVersion: "v2", name, version,
            description: "STAND-IN for the e2e (tools/e2e/harness/chartRepo.ts), no objects; the real chart's repository is not reachable here",
        }));
        return this.addFolder(folder, "stand-in");
    }

    /** A packaged chart (.tgz) whose name and version are known. */
    addPackage(tgz: string, name: string, version: string, origin: string): ChartEntry {
        const file = `${name}-${version}.tgz`;
        if (path.resolve(tgz) !== path.join(this.dir, file)) fs.copyFileSync(tgz, path.join(this.dir, file));
        const entry = { name, version, origin, file };
        this.charts.push(entry);
        return entry;
    }

    /** Writes index.yaml (helm's repository index: entries by name, urls, sha256 digests). */
    writeIndex(): void {
        const entries: Record<string, unknown[]> = {};
        for (const c of this.charts) {
            const tgz = path.join(this.dir, c.file);
            const digest = createHash("sha256").update(fs.readFileSync(tgz)).digest("hex");
            (entries[c.name] ??= []).push({ apiVersion: "v2", name: c.name, version: c.version, urls: [c.file], digest, created: "2026-01-01T00:00:00Z" });
        }
        const text = YAML.stringify({ apiVersion: "v1", entries, generated: "2026-01-01T00:00:00Z" });
        fs.writeFileSync(path.join(this.dir, "index.yaml.tmp"), text);
        fs.renameSync(path.join(this.dir, "index.yaml.tmp"), path.join(this.dir, "index.yaml"));
    }

    /** Serves the folder on a free loopback port until the driver exits. */
    async serve(): Promise<void> {
        this.writeIndex();
        this.server = http.createServer((req, res) => {
            const name = decodeURIComponent((req.url ?? "/").split("?")[0]).replace(/^\/+/, "");
            const file = path.join(this.dir, name);
            if (!name || name.includes("..") || path.dirname(file) !== this.dir || !fs.existsSync(file)) {
                res.writeHead(404).end("not found\n");
                return;
            }
            res.writeHead(200, { "content-type": name.endsWith(".yaml") ? "text/yaml" : "application/gzip" });
            fs.createReadStream(file).pipe(res);
        });
        await new Promise<void>((resolve) => this.server!.listen(0, "127.0.0.1", resolve));
        this.port = (this.server.address() as { port: number }).port;
        this.server.unref();
    }

    close(): void {
        this.server?.close();
    }
}

/** The helm Releases of a render (resources.json): chart name, version and namespace of each add-on. */
export function releasesOf(resourcesJson: string): Array<{ name: string; chart: string; version: string; namespace: string; values: Record<string, unknown> }> {
    const raw = JSON.parse(fs.readFileSync(resourcesJson, "utf8"));
    const list: Array<{ type: string; inputs?: Record<string, any> }> = Array.isArray(raw) ? raw : raw.resources ?? [];
    return list.filter((r) => r.type === "kubernetes:helm.sh/v3:Release").map((r) => ({
        name: String(r.inputs?.name ?? r.inputs?.chart),
        chart: String(r.inputs?.chart),
        version: String(r.inputs?.version),
        namespace: String(r.inputs?.namespace ?? "default"),
        values: (r.inputs?.values ?? {}) as Record<string, unknown>,
    }));
}
