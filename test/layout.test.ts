/**
 * The layout's dependency direction: the policy pack (policies/) and the program (config/,
 * components/, index.ts) depend only downward; they import nothing from the commands users run
 * (cli/), the test and generation machinery (tools/) or the tests (test/). And no file of the
 * checkout is in an import circle (type-only imports included).
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

/** Every TypeScript file of the checkout (node_modules and dot-folders left out). */
function allTsFiles(dir = ROOT): string[] {
    return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
        if (e.name === "node_modules" || e.name.startsWith(".")) return [];
        const full = path.join(dir, e.name);
        return e.isDirectory() ? allTsFiles(full) : e.name.endsWith(".ts") ? [full] : [];
    });
}

/** The file a relative specifier names (x.ts, x/index.ts, or x.js compiled from x.ts), if it is one of `files`. */
function resolveImport(from: string, spec: string, files: ReadonlySet<string>): string | undefined {
    const base = path.resolve(path.dirname(from), spec);
    return [base, `${base}.ts`, path.join(base, "index.ts"), base.replace(/\.js$/, ".ts")].find((f) => files.has(f));
}

/** The import circles among `files` (type-only imports count: a circle is a circle), each as its files in a cycle. */
function importCircles(files: string[]): string[][] {
    const known = new Set(files);
    const edges = new Map(files.map((f) => [f, [...new Set(imports(f).flatMap((s) => resolveImport(f, s, known) ?? []))]]));
    // Tarjan's strongly connected components; a component of two or more files, or a file importing itself, is a circle.
    const index = new Map<string, number>();
    const low = new Map<string, number>();
    const stack: string[] = [];
    const onStack = new Set<string>();
    const circles: string[][] = [];
    const visit = (v: string) => {
        index.set(v, index.size);
        low.set(v, index.get(v)!);
        stack.push(v);
        onStack.add(v);
        for (const w of edges.get(v)!) {
            if (!index.has(w)) {
                visit(w);
                low.set(v, Math.min(low.get(v)!, low.get(w)!));
            } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
        }
        if (low.get(v) !== index.get(v)) return;
        const component: string[] = [];
        let w: string;
        do {
            w = stack.pop()!;
            onStack.delete(w);
            component.push(w);
        } while (w !== v);
        if (component.length > 1 || edges.get(v)!.includes(v)) circles.push(component.map((f) => path.relative(ROOT, f)).sort());
    };
    for (const f of files) if (!index.has(f)) visit(f);
    return circles;
}

test("no import circles anywhere in the checkout", () => {
    const files = allTsFiles();
    assert.ok(files.length > 300, `${files.length} files`);
    assert.deepEqual(importCircles(files), []);
});

test("the circle check finds a circle (type-only, through an index.ts) and passes a line", () => {
    const tmp = fs.mkdtempSync(path.join(ROOT, "policies", ".layout-probe-"));
    try {
        const write = (name: string, text: string) => {
            fs.mkdirSync(path.dirname(path.join(tmp, name)), { recursive: true });
            fs.writeFileSync(path.join(tmp, name), text);
            return path.join(tmp, name);
        };
        const a = write("a.ts", 'import { b } from "./b";\nexport const a = b;\n');
        const b = write("b.ts", 'import type { C } from "./c";\nexport const b = 1 as unknown as C;\n');
        const c = write("c/index.ts", 'export type C = number;\n');
        assert.deepEqual(importCircles([a, b, c]), []);
        write("c/index.ts", 'import { a } from "../a";\nexport type C = typeof a;\n');
        assert.deepEqual(importCircles([a, b, c]), [[a, b, c].map((f) => path.relative(ROOT, f)).sort()]);
    } finally {
        fs.rmSync(tmp, { recursive: true, force: true });
    }
});

test("every path docs/layout.md names exists", () => {
    const page = fs.readFileSync(path.join(ROOT, "docs", "layout.md"), "utf8");
    const named = [...page.matchAll(/`([\w.<>*/-]+)`/g)].map((m) => m[1]).filter((p) => p.includes("/") || /\.(ts|md|json|yaml|sh)$/.test(p));
    assert.ok(named.length > 50, `${named.length} paths`);
    // A <stack> stands for each stack; a * for any file of its folder (which must have one).
    const missing = named.filter((p) => {
        const candidates = p.includes("<stack>") ? ["dev", "prod", "ci"].map((s) => p.replace(/<stack>/g, s)) : [p];
        return !candidates.every((c) => {
            if (!c.includes("*")) return fs.existsSync(path.join(ROOT, c));
            const dir = path.join(ROOT, path.dirname(c));
            const re = new RegExp(`^${path.basename(c).replace(/\./g, "\\.").replace(/\*/g, ".*")}$`);
            return fs.existsSync(dir) && fs.readdirSync(dir).some((f) => re.test(f));
        });
    });
    assert.deepEqual(missing, []);
});
