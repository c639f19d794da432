/**
 * The stack-value corpus checked against the pulumi CLI itself (3.259.0, built by npm run
 * e2e:build; a local file backend, `pulumi config --json` and `pulumi preview`'s config check):
 * the expected values test/stackValues.test.ts holds the render to are the CLI's own. Slow (the
 * real CLI, some forty runs), so in npm run test:integration, not npm test.
 */
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { listStacks, parseStackFile, readStackValues } from "../cli/harness/stackConfig";
import { flatten, schema } from "../config/schemaIndex";
import { CASES, DECLARED, line, NAMESPACES, ROOT, TYPE_CASES, typeKey, type Case } from "./stackValuesCorpus";

const PULUMI = path.join(os.homedir(), ".cache", "ops-e2e", "pulumi-3.259.0", "pulumi");

/** A temporary project folder with a local file backend, and a way to run the pulumi CLI in it. */
function pulumiProject(projectFile: string): { dir: string; run: (args: string[]) => SpawnSyncReturns<string> } {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "stack-values-cli-"));
    const env = { ...process.env, PULUMI_BACKEND_URL: `file://${path.join(dir, "state")}`, PULUMI_CONFIG_PASSPHRASE: "corpus", PULUMI_HOME: path.join(dir, "home"), PULUMI_SKIP_UPDATE_CHECK: "true", PULUMI_DISABLE_AUTOMATIC_PLUGIN_ACQUISITION: "true" };
    fs.mkdirSync(path.join(dir, "state"));
    fs.writeFileSync(path.join(dir, "Pulumi.yaml"), projectFile);
    return { dir, run: (args) => spawnSync(PULUMI, [...args, "--non-interactive", "--cwd", dir], { env, encoding: "utf8", timeout: 60_000 }) };
}

/** The pulumi CLI's reading of each corpus case: `pulumi config --json` on a local file backend. */
function cliReadings(cases: Case[]): Map<number, { value?: string; objectValue?: unknown; error?: string }> {
    const { dir, run } = pulumiProject("name: ops\nruntime: nodejs\n");
    const init = run(["stack", "init", "corpus"]);
    assert.equal(init.status, 0, `pulumi stack init: ${init.stderr}`);
    const header = fs.existsSync(path.join(dir, "Pulumi.corpus.yaml")) ? fs.readFileSync(path.join(dir, "Pulumi.corpus.yaml"), "utf8").split("\n").filter((l) => /^encryptionsalt:/.test(l)).join("\n") : "";
    const out = new Map<number, { value?: string; objectValue?: unknown; error?: string }>();
    const readable = cases.map((c, i) => [c, i] as const).filter(([c]) => !c.cliRefuses);
    const write = (lines: string) => fs.writeFileSync(path.join(dir, "Pulumi.corpus.yaml"), `${header}\nconfig:\n${lines}`);
    write(readable.map(([c, i]) => line(`ops:c${i}`, c.yaml)).join(""));
    const all = run(["config", "--json", "-s", "corpus"]);
    assert.equal(all.status, 0, `pulumi config --json: ${all.stderr}`);
    const json = JSON.parse(all.stdout) as Record<string, { value?: string; objectValue?: unknown }>;
    for (const [, i] of readable) out.set(i, json[`ops:c${i}`] ?? { error: "missing" });
    for (const [c, i] of cases.map((c, i) => [c, i] as const).filter(([c]) => c.cliRefuses)) {
        write(line(`ops:c${i}`, c.yaml));
        const r = run(["config", "--json", "-s", "corpus"]);
        out.set(i, r.status === 0 ? JSON.parse(r.stdout)[`ops:c${i}`] : { error: r.stderr });
    }
    fs.rmSync(dir, { recursive: true, force: true });
    return out;
}

test("the corpus's expected values are the pulumi CLI's own (pulumi 3.259.0, local file backend)", { skip: fs.existsSync(PULUMI) ? false : `needs the pulumi CLI at ${PULUMI} (built by npm run e2e:build)` }, () => {
    const readings = cliReadings(CASES);
    const wrong: string[] = [];
    CASES.forEach((c, i) => {
        const got = readings.get(i)!;
        if (c.cliRefuses) {
            if (!got.error) wrong.push(`${JSON.stringify(c.yaml)}: the CLI read it as ${JSON.stringify(got.value)}, the corpus says it refuses`);
            else if (!got.error.includes(c.cliRefuses)) wrong.push(`${JSON.stringify(c.yaml)}: the CLI refused with ${got.error.trim()}`);
            return;
        }
        if (got.error || got.value !== c.cli) wrong.push(`${JSON.stringify(c.yaml)}: the CLI hands over ${JSON.stringify(got.value ?? got.error)}, the corpus says ${JSON.stringify(c.cli)}`);
        if (Boolean(got.objectValue !== undefined) !== Boolean(c.object)) wrong.push(`${JSON.stringify(c.yaml)}: object ${got.objectValue !== undefined}, the corpus says ${Boolean(c.object)}`);
    });
    assert.deepEqual(wrong, []);
});

/** `pulumi config --json` of a stack of this repository (its Pulumi.yaml and stack file, a local file backend). */
function cliStackConfig(stack: string): Record<string, { value?: string }> {
    const { dir, run } = pulumiProject(fs.readFileSync(path.join(ROOT, "Pulumi.yaml"), "utf8"));
    try {
        assert.equal(run(["stack", "init", stack]).status, 0);
        fs.copyFileSync(path.join(ROOT, `Pulumi.${stack}.yaml`), path.join(dir, `Pulumi.${stack}.yaml`));
        const r = run(["config", "--json", "-s", stack]);
        assert.equal(r.status, 0, r.stderr);
        return JSON.parse(r.stdout);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
}

test("the committed stacks: the render hands the program what the pulumi CLI does, and Pulumi.yaml's defaults read back as the schema's", { skip: fs.existsSync(PULUMI) ? false : `needs the pulumi CLI at ${PULUMI} (built by npm run e2e:build)` }, () => {
    const fields = new Map(flatten(schema).map(({ key, field }) => [`ops:${key}`, field]));
    for (const stack of listStacks()) {
        const cli = cliStackConfig(stack);
        const render = readStackValues(stack).config;
        const inFile = Object.keys(parseStackFile(fs.readFileSync(path.join(ROOT, `Pulumi.${stack}.yaml`), "utf8"), `Pulumi.${stack}.yaml`, "ops", DECLARED, NAMESPACES));
        assert.ok(inFile.length > 20, stack);
        for (const key of inFile) assert.equal(render[key], cli[key]?.value, `${stack}: ${key}`);
        // Keys the stack leaves out get Pulumi.yaml's default from the CLI: it must read as the schema's default.
        for (const [key, entry] of Object.entries(cli)) {
            if (inFile.includes(key) || !fields.has(key) || entry.value === undefined) continue;
            const field = fields.get(key)!;
            const checked = field.check(entry.value);
            assert.ok(checked.ok, `${stack}: ${key}: the CLI hands over ${JSON.stringify(entry.value)} for the default`);
            if (checked.ok) assert.deepEqual(checked.value, field.default, `${stack}: ${key}`);
        }
    }
});

test("the type cases are pulumi preview's own (pulumi 3.259.0: its config check, before any program runs)", { skip: fs.existsSync(PULUMI) ? false : `needs the pulumi CLI at ${PULUMI} (built by npm run e2e:build)` }, () => {
    // Each key declared with a valid default, so only the stack's own values are judged.
    const defaults = { integer: "1", boolean: "false", string: "x", array: "[]" };
    const decls = TYPE_CASES.map((c, i) => `  ${typeKey(i)}:\n    type: ${c.type}\n    default: ${defaults[c.type]}\n${c.items ? `    items:\n      type: ${c.items}\n` : ""}`).join("");
    const { dir, run } = pulumiProject(`name: ops\nruntime: nodejs\nconfig:\n${decls}`);
    try {
        assert.equal(run(["stack", "init", "types"]).status, 0);
        const preview = (lines: string) => {
            fs.writeFileSync(path.join(dir, "Pulumi.types.yaml"), `config:\n${lines}`);
            return run(["preview", "-s", "types"]).stderr;
        };
        const wrong: string[] = [];
        // Every accepted value at once: the check passes, and the preview stops later, at the missing language plugin.
        const accepted = TYPE_CASES.map((c, i) => [c, i] as const).filter(([c]) => c.accepted);
        const all = preview(accepted.map(([c, i]) => line(`ops:${typeKey(i)}`, c.yaml)).join(""));
        if (/validating stack config/.test(all) || !/language plugin/.test(all)) wrong.push(`accepted values did not pass the config check (the preview should stop later, at the language plugin): ${all.trim()}`);
        for (const [c, i] of TYPE_CASES.map((c, i) => [c, i] as const).filter(([c]) => !c.accepted)) {
            const out = preview(line(`ops:${typeKey(i)}`, c.yaml));
            if (!out.includes(`configuration key '${typeKey(i)}' must be of type`)) wrong.push(`${c.type} ${c.yaml}: pulumi preview said ${out.trim().split("\n").pop()}`);
        }
        assert.deepEqual(wrong, []);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});

test("encrypted values of a secret key: the render refuses what pulumi preview refuses (passphrase provider, pulumi 3.259.0)", { skip: fs.existsSync(PULUMI) ? false : `needs the pulumi CLI at ${PULUMI} (built by npm run e2e:build)` }, () => {
    const { dir, run } = pulumiProject("name: ops\nruntime: nodejs\nconfig:\n  s:\n    type: string\n    secret: true\n");
    try {
        assert.equal(run(["stack", "init", "sec"]).status, 0);
        assert.equal(run(["config", "set", "--secret", "s", "hello", "-s", "sec"]).status, 0);
        const file = path.join(dir, "Pulumi.sec.yaml");
        const written = fs.readFileSync(file, "utf8");
        const salt = /^encryptionsalt: .*$/m.exec(written)![0];
        const good = /secure: (\S+)/.exec(written)![1];
        const declared = new Map([["ops:s", { type: "string" as const, secret: true }]]);
        const wrong: string[] = [];
        for (const [value, accepted] of [[`{secure: ${good}}`, true], ["{secure: v1:AAAA}", false], ["{secure: ''}", false], ["{secure: 12}", false], ["{secure: x, other: y}", false], ["plain", false], ["{secure: AAABAKtLN5nM0dPWmKrE2w==}", false]] as const) {
            const text = `${salt}\nconfig:\n${line("ops:s", value)}`;
            fs.writeFileSync(file, text);
            const cli = run(["preview", "-s", "sec"]).stderr;
            const cliAccepts = !/validating stack config/.test(cli) && /language plugin/.test(cli);
            let renderAccepts = true;
            try {
                parseStackFile(text, "Pulumi.sec.yaml", "ops", declared, NAMESPACES);
            } catch {
                renderAccepts = false;
            }
            if (cliAccepts !== accepted) wrong.push(`${value}: pulumi preview ${cliAccepts ? "accepts" : "refuses"} it: ${cli.trim().split("\n").pop()}`);
            if (renderAccepts !== accepted) wrong.push(`${value}: the render ${renderAccepts ? "accepts" : "refuses"} it`);
        }
        assert.deepEqual(wrong, []);
    } finally {
        fs.rmSync(dir, { recursive: true, force: true });
    }
});
