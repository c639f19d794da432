/**
 * Every YAML the render writes means the same to a YAML 1.1 reader (kubectl, Argo CD, helm read
 * 1.1 booleans such as off/yes/y and octal 0755) and to a YAML 1.2 reader: manifests.yaml, the
 * rendered node files, the committed gitops/ files and the YAML texts inside them (helm values of
 * the child applications, elasticsearch.yml).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import * as YAML from "yaml";
import { isYamlAmbiguous, portableYaml } from "../components/lib/yaml";
import { generatedGitopsFiles } from "../tools/genGitops";
import { renderStack } from "./render";

const parseAll = (text: string, version: "1.1" | "1.2") => YAML.parseAllDocuments(text, { version }).map((d) => d.toJS({ maxAliasCount: -1 }));

function assertSameMeaning(text: string, where: string): void {
    const v11 = parseAll(text, "1.1");
    const v12 = parseAll(text, "1.2");
    assert.deepStrictEqual(v11, v12, `${where} reads differently as YAML 1.1 and 1.2`);
}

/** YAML texts embedded as strings: helm values of Argo CD Applications, YAML files of ConfigMaps. */
function embeddedYaml(docs: unknown[]): Array<[string, string]> {
    const out: Array<[string, string]> = [];
    for (const o of docs as any[]) {
        if (!o || typeof o !== "object") continue;
        const values = o.spec?.source?.helm?.values;
        if (typeof values === "string") out.push([`${o.kind} ${o.metadata?.name} helm values`, values]);
        if (o.kind === "ConfigMap") {
            for (const [k, v] of Object.entries(o.data ?? {})) if (/\.ya?ml$/.test(k) && typeof v === "string") out.push([`ConfigMap ${o.metadata?.name} ${k}`, v]);
        }
    }
    return out;
}

test("ambiguous scalars: YAML 1.1 booleans in every case, octal, sexagesimal, binary, underscores, 1.2 octal, null", () => {
    for (const s of ["off", "Off", "OFF", "on", "y", "Y", "n", "N", "yes", "No", "true", "False", "0755", "1:20", "0b101", "1_000", "0o17", "~", "null", "<<", "=", ".inf", "1e3", "12", "1.5", "2001-12-14"]) {
        assert.ok(isYamlAmbiguous(s), `${s} should count as ambiguous`);
    }
    for (const s of ["offline", "nginx", "100m", "512Mi", "http://x:80", "yes please", "15d", "1m30s"]) assert.ok(!isYamlAmbiguous(s), `${s} is a plain string in both versions`);
});

test("portableYaml quotes ambiguous strings in values and keys, leaves real booleans and numbers plain", () => {
    const text = portableYaml({ a: "off", on: "y", mode: "0755", t: "1:20", b: true, n: 3, s: "nginx" });
    assert.match(text, /^a: "off"$/m);
    assert.match(text, /^"on": "y"$/m);
    assert.match(text, /^mode: "0755"$/m);
    assert.match(text, /^t: "1:20"$/m);
    assert.match(text, /^b: true$/m);
    assert.match(text, /^"n": 3$/m, "the key n is a YAML 1.1 boolean");
    assert.match(text, /^s: nginx$/m);
    assertSameMeaning(text, "sample");
    assert.deepStrictEqual(YAML.parse(text, { version: "1.1" }), { a: "off", on: "y", mode: "0755", t: "1:20", b: true, n: 3, s: "nginx" });
});

for (const stack of ["dev", "prod"]) {
    test(`${stack} render: manifests.yaml, rendered files and embedded YAML read the same as YAML 1.1 and 1.2`, async () => {
        const r = await renderStack(stack);
        assertSameMeaning(r.manifests, `${stack} manifests.yaml`);
        // The buffering annotations and MINIO_BROWSER were the reported cases: written quoted.
        assert.doesNotMatch(r.manifests, /:\s+off\s*$/m, "an unquoted off in manifests.yaml");
        for (const [file, text] of Object.entries(r.files)) if (/\.ya?ml$/.test(file)) assertSameMeaning(text, `${stack} ${file}`);
        for (const [where, text] of embeddedYaml(parseAll(r.manifests, "1.2"))) assertSameMeaning(text, `${stack} ${where}`);
    });
}

test("gitops/ files and their helm values read the same as YAML 1.1 and 1.2", () => {
    const files = generatedGitopsFiles();
    assert.ok(Object.keys(files).length > 0);
    for (const [file, text] of Object.entries(files)) {
        assertSameMeaning(text, file);
        for (const [where, inner] of embeddedYaml(parseAll(text, "1.2"))) assertSameMeaning(inner, `${file} ${where}`);
    }
});
