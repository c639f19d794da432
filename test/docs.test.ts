/**
 * Every example of README.md and docs/*.md works as written (see ./docsExamples.ts for how an
 * example is found and how one opts out). `npm test` checks them; `npm run test:docs` also runs
 * the commands (renders, diffs: minutes, so not part of `npm test`).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";
import { loadConstraintSet } from "../policies/gatekeeper/engine";
import { templateRegistry } from "../policies/gatekeeper/templates";
import { allExamples, commandsOf, DocBlock, extractBlocks, REPO_ROOT } from "./docsExamples";

const { blocks, commands } = allExamples();
const scripts: Record<string, string> = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "package.json"), "utf8")).scripts;
const constraintFiles = fs.readdirSync(path.join(REPO_ROOT, "policies", "constraints")).filter((f) => f.endsWith(".yaml")).map((f) => path.join("policies", "constraints", f));
const where = (b: DocBlock) => `${b.file}:${b.line}`;

describe("the docs' Gatekeeper constraint examples", () => {
    const examples = blocks.filter((b) => b.lang === "yaml" && /apiVersion:\s*constraints\.gatekeeper\.sh\//.test(b.text));
    test("there is at least one", () => assert.ok(examples.length > 0));
    for (const b of examples)
        for (const file of constraintFiles)
            test(`${where(b)} appended to ${file} loads`, { skip: b.skip }, () => {
                const text = `${fs.readFileSync(path.join(REPO_ROOT, file), "utf8")}\n${b.text.startsWith("---") ? "" : "---\n"}${b.text}\n`;
                assert.doesNotThrow(() => loadConstraintSet(text, templateRegistry, file), (err: Error) => `${where(b)}: following the docs breaks ${file}: ${err.message}`);
            });
});

describe("the docs' commands", () => {
    for (const c of commands)
        test(`${c.block.file}:${c.line}: ${c.command}`, { skip: c.skip }, () => {
            for (const part of c.command.split(/\s*&&\s*/)) {
                const m = /^npm (ci|test|run(?: --silent)? ([\w:-]+))(?:\s+--\s+(.*))?$/.exec(part);
                assert.ok(m, `${part}: not an npm command; mark the block with <!-- docs-test: skip: <reason> --> if it cannot run here`);
                if (m[2]) assert.ok(scripts[m[2]], `${part}: package.json has no script ${m[2]}`);
                const args = m[3] ?? "";
                for (const [, stack] of args.matchAll(/--stack[= ](\S+)/g)) assert.ok(fs.existsSync(path.join(REPO_ROOT, `Pulumi.${stack}.yaml`)), `${part}: no stack ${stack}`);
                if (/--format[= ]json/.test(args)) assert.match(part, /^npm run --silent /, `${part}: npm prints its banner on stdout; JSON for tools needs npm run --silent`);
            }
        });

    test("files the commands name exist (also in the commands that are not run)", () => {
        const missing = commands
            .filter((c) => c.skip !== "a template with placeholders")
            .flatMap((c) => [...c.command.matchAll(/(?:^|\s)((?:policies|tools|backups|config|docs)\/[\w./-]+\.(?:json|yaml|ts|sh|md))/g)].map((m) => [c, m[1]] as const))
            .filter(([, file]) => !fs.existsSync(path.join(REPO_ROOT, file)))
            .map(([c, file]) => `${c.block.file}:${c.line}: ${file}`);
        assert.deepEqual(missing, []);
    });

    test("run: every command that is not skipped exits 0 (npm run test:docs)", { skip: process.env.DOCS_RUN !== "1" && "set DOCS_RUN=1 (npm run test:docs) to run the commands" }, () => {
        for (const c of commands.filter((x) => !x.skip && !/^npm (ci|test)\b/.test(x.command))) {
            const run = spawnSync("sh", ["-c", c.command], { cwd: REPO_ROOT, encoding: "utf8", timeout: 600_000 });
            assert.equal(run.status, 0, `${c.block.file}:${c.line}: ${c.command}\n${run.stdout}\n${run.stderr}`);
            if (/--format[= ]json/.test(c.command)) assert.doesNotThrow(() => JSON.parse(run.stdout), `${c.command}: stdout is not JSON`);
        }
    });
});

test("the extractor: fences, indentation, opt-out marker and the rules", () => {
    const md = ["<!-- docs-test: skip: needs the staging cluster -->", "```sh", "npm run render -- --stack dev", "```", "", "1. Step", "", "   ```sh", "   kubectl get pods   # a comment", "   npm run diff -- --stack <stack> --base main", "   ```", "```", "plain", "```"].join("\n");
    const b = extractBlocks(md, "x.md");
    assert.deepEqual(b.map((x) => [x.line, x.lang, x.skip]), [[2, "sh", "needs the staging cluster"], [8, "sh", undefined], [12, "", undefined]]);
    assert.deepEqual(commandsOf(b[1]).map((c) => [c.line, c.command, c.skip]), [
        [9, "kubectl get pods", "needs a cluster or a Pulumi backend"],
        [10, "npm run diff -- --stack <stack> --base main", "a template with placeholders"],
    ]);
    assert.equal(commandsOf(b[0])[0].skip, "needs the staging cluster");
});
