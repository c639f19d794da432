/**
 * Regenerates tools/products/definitions/{n8n,opencode}.json from the installed pinned products
 * (tools/products/install.ts). With --check, writes nothing and exits 1 when the committed files
 * differ from what the packages say. Usage: tsx tools/products/genDefinitions.ts [--check]
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { definitionFile, extractN8n, extractOpencode } from "./definitions";
import { install } from "./install";
import { PRODUCTS } from "./pins";

export async function generate(): Promise<Record<"n8n" | "opencode", string>> {
    install(PRODUCTS.n8n);
    install(PRODUCTS.opencode);
    const text = (o: unknown) => JSON.stringify(o, null, 1) + "\n";
    return { n8n: text(extractN8n()), opencode: text(await extractOpencode()) };
}

async function main() {
    const check = process.argv.includes("--check");
    const fresh = await generate();
    let differs = 0;
    for (const [product, text] of Object.entries(fresh) as ["n8n" | "opencode", string][]) {
        const file = definitionFile(product);
        const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "";
        if (old === text) { console.log(`${path.relative(process.cwd(), file)}: up to date`); continue; }
        if (check) { differs++; console.error(`${path.relative(process.cwd(), file)}: differs from what ${product}'s package says; run tsx tools/products/genDefinitions.ts`); continue; }
        fs.mkdirSync(path.dirname(file), { recursive: true });
        const tmp = `${file}.tmp-${process.pid}`;
        fs.writeFileSync(tmp, text);
        fs.renameSync(tmp, file);
        console.log(`${path.relative(process.cwd(), file)}: written`);
    }
    process.exit(differs ? 1 : 0);
}

if (require.main === module) main().catch((e) => { console.error(e instanceof Error ? e.message : e); process.exit(1); });
