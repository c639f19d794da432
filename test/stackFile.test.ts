/**
 * A stack file that the pulumi CLI would refuse, or that would silently render the defaults, is
 * refused before anything is rendered, naming the file (and the line where there is one).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { providerNamespaces, readStackValues, StackFileError } from "../cli/harness/stackConfig";

const ROOT = path.resolve(__dirname, "..");

/** A copy of the project's Pulumi.yaml and package.json with one stack file `bad`. */
function stackWith(text: string): string {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "stack-file-"));
    for (const f of ["Pulumi.yaml", "package.json"]) fs.copyFileSync(path.join(ROOT, f), path.join(root, f));
    fs.writeFileSync(path.join(root, "Pulumi.bad.yaml"), text);
    return root;
}

function refusal(text: string): string {
    try {
        readStackValues("bad", {}, stackWith(text));
    } catch (err) {
        assert.ok(err instanceof StackFileError, String(err));
        assert.match(err.message, /^Pulumi\.bad\.yaml: \d+ problems?; nothing was rendered/);
        return err.message;
    }
    assert.fail("the stack file was accepted");
}

test("an empty stack file (or one with comments only) is refused", () => {
    assert.match(refusal(""), /the file is empty; expected a `config:` map/);
    assert.match(refusal("# nothing here yet\n"), /the file is empty/);
    assert.match(refusal("secretsprovider: passphrase\n"), /there is no `config:` map/);
});

test("a misspelt `config:` and `config: hello` are refused with the line", () => {
    assert.match(refusal("confg:\n  ops:environmentTier: dev\n"), /line 1: `confg` is not a stack file setting \(did you mean `config`\?\)/);
    assert.match(refusal("config: hello\n"), /line 1: `config:` must be a map of `ops:<key>: <value>`, got "hello"/);
    assert.match(refusal("config:\n  - ops:environmentTier\n"), /got a list/);
});

test("keys under a namespace the program does not read are refused; the providers' namespaces are allowed", () => {
    assert.deepEqual(providerNamespaces(), ["kubernetes", "pulumi", "random", "tls"]);
    const message = refusal("config:\n  ops:environmentTier: dev\n  opps:environmentTier: prod\n  aws:region: eu-west-1\n");
    assert.match(message, /line 3: `opps:environmentTier` is in the namespace "opps", which nothing in this program reads/);
    assert.match(message, /line 4: `aws:region` is in the namespace "aws"/);
    const ok = readStackValues("bad", {}, stackWith("config:\n  ops:environmentTier: dev\n  kubernetes:context: kind-ops\n"));
    assert.equal(ok.config["kubernetes:context"], "kind-ops");
});

test("a secret key given in plain text is refused with the command that stores it encrypted", () => {
    const message = refusal("config:\n  ops:environmentTier: dev\n  ops:columnStorePassword: correct-horse-battery\n");
    assert.match(message, /line 3: `ops:columnStorePassword` is a secret and is given in plain text; remove the line and store it encrypted: pulumi config set --secret columnStorePassword -s bad/);
    assert.doesNotMatch(message, /correct-horse-battery/, "the value is never echoed");
    const ok = readStackValues("bad", {}, stackWith("config:\n  ops:environmentTier: dev\n  ops:columnStorePassword:\n    secure: v1:AAAAAAAAAAAAAAAA:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA\n"));
    assert.ok(ok.placeholders.includes("columnStorePassword"));
});

test("YAML errors name the file, line and column; duplicate keys too", () => {
    assert.match(refusal("config:\n  ops:environmentTier: dev\n  ops:bad: [1,\n"), /line \d+, column \d+: Flow sequence/);
    assert.match(refusal("config:\n  ops:environmentTier: dev\n  ops:environmentTier: prod\n"), /line 3, column 3: Map keys must be unique/);
});

test("the committed stack files pass", () => {
    for (const stack of ["dev", "prod", "ci"]) assert.doesNotThrow(() => readStackValues(stack));
});
