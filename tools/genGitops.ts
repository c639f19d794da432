/**
 * npm run gen:gitops: writes the child application manifests of every stack to gitops/<stack>/
 * (components/platform/gitopsChildren.ts), from the stack's configuration read offline. The parent
 * application reads that folder from the main branch; test/gitops.test.ts fails when the committed
 * files differ from what this generates.
 */
import * as fs from "fs";
import * as path from "path";
import { loadConfig, mapSource, StackConfig } from "../config";
import type { DigestMode } from "../config/imageLock";
import { childManifestFiles } from "../components/platform/gitopsChildren";
import { listStacks, readStackValues, REPO_ROOT } from "../cli/harness/stackConfig";

/**
 * A stack's typed configuration from Pulumi.<stack>.yaml read offline (secret keys get their render
 * placeholders). digestMode: what a prod tag without a record in
 * images.lock.json becomes: "tag" (the default; what gen:gitops writes, never an unverified digest)
 * or "placeholder" (the offline render's stand-in digest, for checks of what prod runs).
 */
export function offlineStackConfig(stack: string, digestMode: DigestMode = "tag"): StackConfig {
    const values = readStackValues(stack);
    const prefix = `${values.project}:`;
    const flat = Object.fromEntries(Object.entries(values.config).filter(([k]) => k.startsWith(prefix)).map(([k, v]) => [k.slice(prefix.length), v]));
    return loadConfig(mapSource(values.project, stack, flat, { digestMode }));
}

export function gitopsFolder(cfg: StackConfig, root = REPO_ROOT): string {
    return path.join(root, cfg.gitops.pathPrefix, cfg.stack);
}

/** The generated files of every stack, by path relative to the repository root. */
export function generatedGitopsFiles(root = REPO_ROOT): Record<string, string> {
    const out: Record<string, string> = {};
    for (const stack of listStacks(root)) {
        const cfg = offlineStackConfig(stack);
        for (const [file, text] of Object.entries(childManifestFiles(cfg))) out[path.relative(root, path.join(gitopsFolder(cfg, root), file))] = text;
    }
    return out;
}

if (require.main === module) {
    const files = generatedGitopsFiles();
    const folders = new Set(Object.keys(files).map((f) => path.dirname(f)));
    for (const folder of folders) {
        const abs = path.join(REPO_ROOT, folder);
        fs.mkdirSync(abs, { recursive: true });
        // Files of children that no longer exist must go too (the parent prunes what is not in git).
        for (const old of fs.readdirSync(abs).filter((f) => f.endsWith(".yaml"))) fs.rmSync(path.join(abs, old));
    }
    for (const [file, text] of Object.entries(files)) fs.writeFileSync(path.join(REPO_ROOT, file), text);
    console.log(`wrote ${Object.keys(files).sort().join(", ")}`);
}
