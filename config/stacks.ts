/** The repository's stacks: one Pulumi.<stack>.yaml each at the repository root. */
import * as fs from "fs";
import * as path from "path";

export const REPO_ROOT = path.resolve(__dirname, "..");

export function listStacks(root = REPO_ROOT): string[] {
    return fs.readdirSync(root).map((f) => /^Pulumi\.(.+)\.yaml$/.exec(f)?.[1]).filter((s): s is string => !!s).sort();
}

/** Pulumi's stack names: letters, digits, hyphens, underscores and periods (never a path). */
const STACK_NAME = /^[A-Za-z0-9_][A-Za-z0-9_.-]*$/;

/** Why `stack` is not one of the repository's stacks (a path, a bad name, no stack file), or undefined. */
export function stackNameProblem(stack: string, root = REPO_ROOT): string | undefined {
    const stacks = listStacks(root);
    if (!STACK_NAME.test(stack) || stack.includes("..")) return `--stack "${stack}" is not a stack name; stacks are ${stacks.join(", ")} (letters, digits, - _ and .)`;
    if (!stacks.includes(stack)) return `no stack "${stack}" (no Pulumi.${stack}.yaml); stacks are ${stacks.join(", ")}`;
    return undefined;
}
