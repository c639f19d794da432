/**
 * The layout's dependency direction: the policy pack (policies/) and the program (config/,
 * components/, index.ts) depend only downward; they import nothing from the commands users run
 * (cli/), the test and generation machinery (tools/) or the tests (test/).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";

const ROOT = path.resolve(__dirname, "..");
const UPPER = ["cli", "tools", "test"];

function tsFiles(dir: string): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        const full = path.join(dir, e.name);
        return e.isDirectory() ? tsFiles(full) : e.name.endsWith(".ts") ? [full] : [];
    });
}

/** Relative module specifiers of import/export-from/require/import() in a file. */
function imports(file: string): string[] {
    const text = fs.readFileSync(file, "utf8");
    return [...text.matchAll(/(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)["'](\.{1,2}\/[^"']+)["']/gm)].map((m) => m[1]);
}

test("the policy pack and the program import nothing from cli/, tools/ or test/", () => {
    const files = [...["policies", "config", "components"].flatMap((d) => tsFiles(path.join(ROOT, d))), path.join(ROOT, "index.ts")];
    assert.ok(files.length > 50, `${files.length} files`);
    const upward = files.flatMap((file) =>
        imports(file)
            .map((spec) => path.relative(ROOT, path.resolve(path.dirname(file), spec)))
            .filter((target) => UPPER.includes(target.split(path.sep)[0]))
            .map((target) => `${path.relative(ROOT, file)} -> ${target}`),
    );
    assert.deepEqual(upward, []);
});

test("the import scan sees an upward import (the check above can fail)", () => {
    const tmp = fs.mkdtempSync(path.join(ROOT, "policies", ".layout-probe-"));
    try {
        const file = path.join(tmp, "probe.ts");
        fs.writeFileSync(file, 'import type { RenderResult } from "../../cli/harness/render";\n');
        assert.deepEqual(imports(file), ["../../cli/harness/render"]);
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
});
