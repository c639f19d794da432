/**
 * The offline render reads a stack file's values exactly as the pulumi CLI does (the string the
 * program gets for each key), over the corpus of spellings in test/fixtures/stack-values/: what
 * the CLI cannot read the render refuses too, and where the render is stricter (no value, a
 * `secure:` map that is not an encrypted value) it says so instead of guessing.
 *
 * The corpus's expected values come from the CLI's source; test/stackValues.integration.ts (npm
 * run test:integration) checks them against the pulumi CLI itself wherever it is built.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, it, test } from "node:test";
import { parseStackFile, readStackValues, StackFileError } from "../cli/harness/stackConfig";
import { CASES, DECLARED, line, NAMESPACES, ROOT, TYPE_CASES, typeDeclarations, typeKey } from "./stackValuesCorpus";

/** A copy of the project's Pulumi.yaml and package.json with one stack file `bad`. */
function stackWith(text: string): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "stack-values-"));
    for (const f of ["Pulumi.yaml", "package.json"]) fs.copyFileSync(path.join(ROOT, f), path.join(root, f));
    fs.writeFileSync(path.join(root, "Pulumi.bad.yaml"), text);
    return root;
}

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



test("a key given both with and without the project's namespace is refused (the CLI keeps one of them at random)", () => {
    const root = stackWith("config:\n  ops:environmentTier: dev\n  environmentTier: prod\n");
    try {
        assert.throws(() => readStackValues("bad", {}, root), /line 3: `environmentTier` is also given as `ops:environmentTier` \(line 2\)/);
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
});




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
