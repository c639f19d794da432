/**
 * A value that looks like a secret never appears in any output of the render, whatever key holds
 * it (issue 22): not in manifests.yaml, resources.json, the summary or the messages; the render
 * fails naming where it is, never what it is.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { publishRender } from "../cli/harness/output";
import { render, summary } from "../cli/harness/render";
import { failureLine } from "../cli/render";
import { packVerdict } from "../policies/pack/render";
import { redactSecretShapes, SECRET_SHAPE_REDACTED } from "../policies/pack/secretPatterns";

const TOKEN = "sk-proj-AbCdEfGhIjKlMnOpQrStUvWxYz0123456789";

test("redactSecretShapes replaces API keys, private keys and high-entropy tokens, and leaves public material and plain text", () => {
    assert.equal(redactSecretShapes(`bind ${TOKEN} now`), `bind ${SECRET_SHAPE_REDACTED} now`);
    assert.equal(redactSecretShapes("x AKIAABCDEFGHIJKLMNOP y"), `x ${SECRET_SHAPE_REDACTED} y`);
    assert.equal(redactSecretShapes("-----BEGIN PRIVATE KEY-----\nMIIabc\n-----END PRIVATE KEY-----\n"), `${SECRET_SHAPE_REDACTED}\n`);
    assert.equal(redactSecretShapes("t: Zq8vB3nK1mW7xR2pL9sT4yH6jD0fG5cA"), `t: ${SECRET_SHAPE_REDACTED}`);
    for (const plain of ["sha256:" + "a".repeat(64), "/usr/share/nginx/html", "-----BEGIN CERTIFICATE REQUEST-----\nMIIBZjCCAQwCAQAwFDESMBAGA1UEAwwJbG9jYWxob3N0MFkwEwYHKoZIzj0CAQYI\n-----END CERTIFICATE REQUEST-----"])
        assert.equal(redactSecretShapes(plain), plain);
});

test("a secret-looking value in a non-secret key: the render fails naming the field, and no output holds the value", async () => {
    const result = await render("dev", { agentServerProviderDisplayName: TOKEN });
    assert.ok(result.errors.some((e) => /: .*holds an API key \(sk-\.\.\.\) in plain text \(redacted in the output\)/.test(e)), result.errors.join("\n"));
    const printed = [summary(result, [packVerdict(result).text]), publishRender(result, "/nonexistent/never-written").message, ...result.errors].join("\n");
    for (const [name, text] of Object.entries({ manifests: result.manifests, resources: result.resourcesJson, printed, ...result.files }))
        assert.ok(!text.includes(TOKEN), `${name} holds the value`);
    assert.ok(result.manifests.includes(SECRET_SHAPE_REDACTED));
});

test("a message that quotes a secret-looking value (a configuration error) is printed redacted", () => {
    assert.equal(failureLine(new Error(`ops:agentServerModel: got "${TOKEN}", expected <provider>/<model_key>`)), `render failed: ops:agentServerModel: got "${SECRET_SHAPE_REDACTED}", expected <provider>/<model_key>`);
});
