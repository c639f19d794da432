/**
 * The offline render reads a stack file's values exactly as the pulumi CLI does (the string the
 * program gets for each key), over the corpus of spellings in test/fixtures/stack-values/: what
 * the CLI cannot read the render refuses too, and where the render is stricter (no value, a
 * `secure:` map that is not an encrypted value) it says so instead of guessing.
 *
 * The corpus's expected values come from the CLI's source; the last test checks them against the
 * pulumi CLI itself (`pulumi config --json` on a local file backend) wherever it is built.
 */
import assert from "node:assert/strict";
import { spawnSync, type SpawnSyncReturns } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it, test } from "node:test";
import * as YAML from "yaml";
import { declaredKeys, listStacks, parseStackFile, providerNamespaces, readStackValues, StackFileError } from "../cli/harness/stackConfig";
import { flatten, schema } from "../config/schemaIndex";

const ROOT = path.resolve(__dirname, "..");

interface Case {
    yaml: string;
    cli?: string;
    object?: boolean;
    cliRefuses?: string;
    renderRefuses?: string;
}

const CASES: Case[] = YAML.parse(fs.readFileSync(path.join(__dirname, "fixtures", "stack-values", "corpus.yaml"), "utf8")).cases;

/** A stack file line `<key>: <value>` (a value spanning lines keeps its indentation under `config:`). */
const line = (key: string, value: string) => `  ${key}: ${value}\n`;

/** A copy of the project's Pulumi.yaml and package.json with one stack file `bad`. */
function stackWith(text: string): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "stack-values-"));
    for (const f of ["Pulumi.yaml", "package.json"]) fs.copyFileSync(path.join(ROOT, f), path.join(root, f));
    fs.writeFileSync(path.join(root, "Pulumi.bad.yaml"), text);
    return root;
}

const DECLARED = declaredKeys("ops");
const NAMESPACES = providerNamespaces(ROOT);

/** The render's reading of `ops:<key>: <value>` (its stack-file parser, as readStackValues runs it): the text handed to the program, or the refusal. */
function renderReading(key: string, value: string): { text?: string; refusal?: string } {
    try {
        const v = parseStackFile(`config:\n  ops:environmentTier: dev\n${line(`ops:${key}`, value)}`, "Pulumi.bad.yaml", "ops", DECLARED, NAMESPACES)[`ops:${key}`];
        return { text: v && "text" in v ? v.text : undefined };
    } catch (err) {
        assert.ok(err instanceof StackFileError, `not a stack file refusal: ${err}`);
        return { refusal: err.message };
    }
}

test("the corpus covers the spellings the issue names and more", () => {
    const spelled = new Set(CASES.map((c) => c.yaml));
    for (const s of ["True", "FALSE", "0x2", "0o3", "2e0", "2.0", "+2", "", "{secure: 12}"]) assert.ok(spelled.has(s), s);
    assert.ok(CASES.length >= 60);
});

test("the render hands the program what the pulumi CLI hands it, for every spelling of the corpus", () => {
    const wrong: string[] = [];
    for (const c of CASES) {
        // An arbitrary key of no declared type: only the reading is compared here.
        const r = renderReading("corpusValue", c.yaml);
        const want = c.cliRefuses ?? c.renderRefuses;
        if (want) {
            if (!r.refusal) wrong.push(`${JSON.stringify(c.yaml)}: read as ${JSON.stringify(r.text)}, expected a refusal (${want})`);
            else if (!r.refusal.includes(want) && !c.cliRefuses) wrong.push(`${JSON.stringify(c.yaml)}: refused without saying "${want}": ${r.refusal}`);
            else if (!/line 3: `ops:corpusValue`/.test(r.refusal)) wrong.push(`${JSON.stringify(c.yaml)}: the refusal names no line and key: ${r.refusal}`);
            continue;
        }
        if (r.refusal) wrong.push(`${JSON.stringify(c.yaml)}: refused (${r.refusal}), the CLI reads ${JSON.stringify(c.cli)}`);
        else if (r.text !== c.cli) wrong.push(`${JSON.stringify(c.yaml)}: read as ${JSON.stringify(r.text)}, the CLI reads ${JSON.stringify(c.cli)}`);
    }
    assert.deepEqual(wrong, []);
});

test("an encrypted value on a key that is not a secret is refused, not dropped for the default", () => {
    const r = renderReading("environmentDomain", "\n    secure: v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA");
    assert.match(r.refusal ?? "", /line 3: `ops:environmentDomain` is stored encrypted but is not a secret of this project/);
});

test("malformed encrypted values of secret keys are refused", () => {
    for (const v of ["{secure: ''}", "{secure: v1:AAAA}", "{secure: 'not base64!'}", "{secure: 12}", "{secure: x, other: y}"]) {
        const r = renderReading("columnStorePassword", v);
        assert.match(r.refusal ?? "", /line 3: `ops:columnStorePassword`/, v);
        assert.match(r.refusal ?? "", /encrypted value|ciphertext/, v);
    }
    for (const v of ["{secure: v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA}", "{secure: AAABAKtLN5nM0dPWmKrE2w==}"]) {
        const r = renderReading("columnStorePassword", v);
        assert.equal(r.refusal, undefined, `${v}: ${r.refusal}`);
    }
});

test("what `pulumi preview` refuses by the type Pulumi.yaml declares is refused by the render too", () => {
    // A quoted JSON text is a string to the CLI: an array key refuses it at preview.
    assert.match(renderReading("agentServerPorts", `'[4000, 4001]'`).refusal ?? "", /line 3: `ops:agentServerPorts` .*must be of type array<integer>/);
    assert.match(renderReading("environmentSpreadAcrossNodes", "yes").refusal ?? "", /must be of type boolean/);
    assert.match(renderReading("bridgePort", "2.5").refusal ?? "", /must be of type integer/);
    assert.match(renderReading("environmentDomain", "[a]").refusal ?? "", /must be of type string/);
    // What the CLI turns into a valid value passes, as the CLI reads it.
    assert.equal(renderReading("bridgePort", "0x0C1C").text, "3100");
    assert.equal(renderReading("environmentSpreadAcrossNodes", "True").text, "true");
    assert.equal(renderReading("agentServerPorts", "[4000, 0xFA1]").text, "[4000,4001]");
});

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

test("a key given both with and without the project's namespace is refused (the CLI keeps one of them at random)", () => {
    const root = stackWith("config:\n  ops:environmentTier: dev\n  environmentTier: prod\n");
    try {
        assert.throws(() => readStackValues("bad", {}, root), /line 3: `environmentTier` is also given as `ops:environmentTier` \(line 2\)/);
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
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

/** Values against the type Pulumi.yaml declares: does `pulumi preview` take them (its check runs before the program)? */
const TYPE_CASES: Array<{ type: "integer" | "boolean" | "string" | "array"; items?: "integer" | "string"; yaml: string; accepted: boolean }> = [
    { type: "integer", yaml: "2.5", accepted: false },
    { type: "integer", yaml: "0x10", accepted: true },
    { type: "integer", yaml: "'12'", accepted: true },
    { type: "integer", yaml: "'0x10'", accepted: false },
    { type: "integer", yaml: "+5", accepted: true },
    { type: "integer", yaml: "[1]", accepted: false },
    { type: "boolean", yaml: "yes", accepted: false },
    { type: "boolean", yaml: "True", accepted: true },
    { type: "boolean", yaml: "'True'", accepted: false },
    { type: "string", yaml: "12", accepted: true },
    { type: "string", yaml: "[a]", accepted: false },
    { type: "array", items: "integer", yaml: "'[4000]'", accepted: false },
    { type: "array", items: "integer", yaml: "['4000']", accepted: true },
    { type: "array", items: "integer", yaml: "[4000, 2.0]", accepted: true },
    { type: "array", items: "integer", yaml: "[2.5]", accepted: false },
    { type: "array", items: "string", yaml: "[1]", accepted: false },
    { type: "array", items: "string", yaml: "a", accepted: false },
];
const typeKey = (i: number) => `t${i}`;
const typeDeclarations = () => new Map(TYPE_CASES.map((c, i) => [`ops:${typeKey(i)}`, { type: c.type, items: c.items, secret: false }]));

test("the render refuses exactly what `pulumi preview` refuses for a declared type", () => {
    const declared = typeDeclarations();
    TYPE_CASES.forEach((c, i) => {
        let refusal = "";
        try {
            parseStackFile(`config:\n${line(`ops:${typeKey(i)}`, c.yaml)}`, "Pulumi.bad.yaml", "ops", declared, NAMESPACES);
        } catch (err) {
            refusal = (err as Error).message;
        }
        assert.equal(refusal === "", c.accepted, `${c.type}${c.items ? `<${c.items}>` : ""} ${c.yaml}: ${refusal}`);
        if (!c.accepted) assert.match(refusal, new RegExp(`must be of type ${c.type === "array" ? `array<${c.items}>` : c.type}`));
    });
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

describe("issue 42 class 8: the ESC `environment:` key of a stack file, as the pulumi CLI 3.259.0 reads it on a file backend", () => {
    const parse = (environment: string) => () => parseStackFile(`environment:${environment}\nconfig:\n  ops:environmentTier: dev\n`, "Pulumi.bad.yaml", "ops", DECLARED, NAMESPACES);
    it("a list of environments, a definition or a name: refused naming the line, as the CLI refuses it (openStackEnv: 'does not support environments')", () => {
        for (const env of ["\n  - team/prod", " {imports: [team/prod]}", " team/prod", " {}", "\n  values:\n    x: 1"])
            assert.throws(parse(env), (err: Error) => err instanceof StackFileError && /line [12]: `environment:` imports Pulumi ESC environments: the pulumi CLI on a file backend refuses the stack/.test(err.message), env);
    });
    it("an empty list or no value: nothing to open, as for the CLI (Environment.Definition is nil)", () => {
        for (const env of [" []", "", " null", " ~"]) assert.doesNotThrow(parse(env), env);
    });
});
