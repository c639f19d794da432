/**
 * Step 4 of the e2e: a configuration change did what the preview said, and the PR diff names the
 * same replacements.
 *   tsx tools/e2e/plan.ts prepare <stack> <overrides-json> <volume-dir> <out-dir>
 *       renders the stack with the overrides (the render harness): out-dir/head.json (redacted
 *       objects) and out-dir/volumes.json (pre-bound volumes for the claims the change adds).
 *   tsx tools/e2e/plan.ts check <preview.json> <up.json> <out-dir> <base manifests.yaml>
 * preview.json and up.json are engine.ts reports. The diff side is `npm run diff`'s own code
 * (diffObjects + findReplacements + its Markdown) over the offline render of the stack before
 * (the base manifests) and with the overrides, as a pull request changing those keys would show
 * it. Exit 0 when: the up took exactly the preview's update/replace steps,
 * at least one object is updated in place and one replaced, and the Kubernetes objects the
 * engine replaced are exactly the ones the diff names.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { render } from "../../cli/harness/render";
import { diffObjects } from "../../cli/diff/objects";
import { findReplacements } from "../../cli/diff/replacements";
import { replacementLines } from "../../cli/diff/replacementsMarkdown";
import { parseManifests, standInVolumes, type K8sObject } from "./objects";
import type { EngineReport } from "./engine";

const REPLACE_OPS = new Set(["replace", "create-replacement", "delete-replaced"]);

function plan(r: EngineReport): Map<string, { op: string; object?: string }> {
    const out = new Map<string, { op: string; object?: string }>();
    for (const s of r.steps) {
        const op = REPLACE_OPS.has(s.op) ? "replace" : s.op;
        if (op !== "replace" && op !== "update" && op !== "create" && op !== "delete") continue;
        const prev = out.get(s.urn);
        out.set(s.urn, { op: prev?.op === "replace" ? "replace" : op, object: s.object ?? prev?.object });
    }
    return out;
}

function writeJson(file: string, value: unknown): void {
    fs.writeFileSync(`${file}.tmp.${process.pid}`, JSON.stringify(value));
    fs.renameSync(`${file}.tmp.${process.pid}`, file);
}

async function prepare(stack: string, overridesJson: string, volumeDir: string, outDir: string): Promise<number> {
    const head = await render(stack, JSON.parse(overridesJson));
    if (head.errors.length > 0) {
        console.error(`the render of ${stack} with ${overridesJson} failed: ${head.errors.join("; ")}`);
        return 1;
    }
    fs.mkdirSync(outDir, { recursive: true });
    writeJson(path.join(outDir, "head.json"), head.redactedObjects);
    writeJson(path.join(outDir, "volumes.json"), { apiVersion: "v1", kind: "List", items: standInVolumes(head.objects, volumeDir) });
    console.log(`${head.redactedObjects.length} objects with ${overridesJson}`);
    return 0;
}

async function main(): Promise<number> {
    const [cmd, ...args] = process.argv.slice(2);
    if (cmd === "prepare" && args.length === 4) return prepare(args[0], args[1], args[2], args[3]);
    const [previewFile, upFile, outDir, baseManifests] = args;
    if (cmd !== "check" || !baseManifests) throw new Error("usage: plan.ts prepare <stack> <overrides-json> <volume-dir> <out-dir> | check <preview.json> <up.json> <out-dir> <base manifests.yaml>");
    const preview = JSON.parse(fs.readFileSync(previewFile, "utf8")) as EngineReport;
    const up = JSON.parse(fs.readFileSync(upFile, "utf8")) as EngineReport;
    const problems: string[] = [];
    if (!preview.ok) problems.push(`the preview failed: ${preview.error}`);
    if (!up.ok) problems.push(`the up failed: ${up.error}`);
    const p = plan(preview);
    const u = plan(up);
    const line = (m: Map<string, { op: string; object?: string }>) => [...m].map(([urn, s]) => `${s.op} ${s.object ?? urn}`).sort();
    if (JSON.stringify(line(p)) !== JSON.stringify(line(u))) problems.push(`the up differs from the preview:\n  preview: ${line(p).join("; ")}\n  up:      ${line(u).join("; ")}`);
    const updated = [...p.values()].filter((s) => s.op === "update");
    const replaced = [...p.values()].filter((s) => s.op === "replace");
    if (updated.length === 0) problems.push("nothing was updated in place");
    if (replaced.length === 0) problems.push("nothing was replaced");

    const head = JSON.parse(fs.readFileSync(path.join(outDir, "head.json"), "utf8")) as K8sObject[];
    const base = parseManifests(fs.readFileSync(baseManifests, "utf8"));
    const diff = diffObjects(base, head);
    const named = findReplacements(diff.changed);
    const describe = (r: { kind: string; namespace?: string; name: string }) => `${r.kind} ${r.namespace ? `${r.namespace}/` : ""}${r.name}`;
    const byDiff = named.map(describe).sort();
    const byEngine = replaced.map((s) => s.object).filter((o): o is string => !!o).sort();
    if (JSON.stringify(byDiff) !== JSON.stringify(byEngine)) problems.push(`replacements: the engine replaced [${byEngine.join("; ")}], the PR diff names [${byDiff.join("; ")}]`);

    console.log(`preview and up: ${line(p).join("; ")}`);
    console.log(replacementLines(named).join("\n"));
    for (const x of problems) console.log(`PROBLEM: ${x}`);
    if (problems.length === 0) {
        console.log(`RESULT: as previewed: ${updated.length} updated in place (${updated.map((s) => s.object ?? "?").join(", ")}), ${replaced.length} replaced (${byEngine.join(", ")}); npm run diff names the same replacement: ${named.map((r) => `${describe(r)} (${r.fields.join(", ")})`).join("; ")}`);
    }
    return problems.length === 0 ? 0 : 1;
}

main().then((code) => process.exit(code), (err) => {
    console.error(err instanceof Error ? err.stack ?? err.message : String(err));
    process.exit(2);
});
