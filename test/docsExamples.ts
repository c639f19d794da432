/**
 * The examples of README.md and docs/*.md: fenced code blocks, and the commands of their sh
 * blocks classified by what it takes to run them.
 *
 * How an example opts out: the line before its fence is `<!-- docs-test: skip: <reason> -->`.
 * Without it, these are skipped by rule, with the rule as the reason:
 *   - commands of `kubectl`, `pulumi` or `export` (they need a cluster or a Pulumi backend);
 *   - lines with placeholders (`<name>`, `…`): templates, not commands;
 *   - blocks without a language (file layouts, output).
 * Every other `npm ...` line is checked (`npm test`) and run (`npm run test:docs`), and every
 * Gatekeeper constraint in a yaml block is added to each stack's constraint file and loaded.
 */
import * as fs from "fs";
import * as path from "path";

export const REPO_ROOT = path.resolve(__dirname, "..");

export interface DocBlock {
    file: string;
    /** Line of the opening fence (1-based). */
    line: number;
    lang: string;
    text: string;
    /** The opt-out reason of `<!-- docs-test: skip: ... -->`. */
    skip?: string;
}

export interface DocCommand {
    block: DocBlock;
    line: number;
    command: string;
    /** Why it is not run, or undefined for a command that is run. */
    skip?: string;
}

export function docFiles(root = REPO_ROOT): string[] {
    const docs = fs.existsSync(path.join(root, "docs")) ? fs.readdirSync(path.join(root, "docs")).filter((f) => f.endsWith(".md")).sort().map((f) => path.join("docs", f)) : [];
    return ["README.md", ...docs].filter((f) => fs.existsSync(path.join(root, f)));
}

export function extractBlocks(markdown: string, file: string): DocBlock[] {
    const lines = markdown.split("\n");
    const blocks: DocBlock[] = [];
    for (let i = 0; i < lines.length; i++) {
        const open = /^(\s*)(```+)\s*([\w-]*)/.exec(lines[i]);
        if (!open) continue;
        const [, indent, fence, lang] = open;
        const body: string[] = [];
        let j = i + 1;
        for (; j < lines.length && !new RegExp(`^\\s*${fence}\\s*$`).test(lines[j]); j++) body.push(lines[j].startsWith(indent) ? lines[j].slice(indent.length) : lines[j]);
        const marker = /<!--\s*docs-test:\s*skip:\s*(.+?)\s*-->/.exec(lines[i - 1] ?? "");
        blocks.push({ file, line: i + 1, lang, text: body.join("\n"), skip: marker?.[1] });
        i = j;
    }
    return blocks;
}

export function commandsOf(block: DocBlock): DocCommand[] {
    if (block.lang !== "sh" && block.lang !== "bash" && block.lang !== "shell") return [];
    return block.text.split("\n").flatMap((raw, i): DocCommand[] => {
        const command = raw.replace(/\s+#\s.*$/, "").replace(/^\s*#.*$/, "").trim();
        if (!command) return [];
        const line = block.line + 1 + i;
        let skip = block.skip;
        if (!skip && /^(kubectl|pulumi|export)\b/.test(command)) skip = "needs a cluster or a Pulumi backend";
        else if (!skip && /<[^>]+>|…/.test(command)) skip = "a template with placeholders";
        return [{ block, line, command, skip }];
    });
}

export function allExamples(root = REPO_ROOT): { blocks: DocBlock[]; commands: DocCommand[] } {
    const blocks = docFiles(root).flatMap((f) => extractBlocks(fs.readFileSync(path.join(root, f), "utf8"), f));
    return { blocks, commands: blocks.flatMap(commandsOf) };
}
