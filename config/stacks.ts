/** The repository's stacks: one Pulumi.<stack>.yaml each at the repository root. */
import * as fs from "fs";
import * as path from "path";

export const REPO_ROOT = path.resolve(__dirname, "..");

export function listStacks(root = REPO_ROOT): string[] {
    return fs.readdirSync(root).map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1]).filter((s): s is string => !!s).sort();
}
