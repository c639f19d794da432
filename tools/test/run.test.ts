import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { test } from "node:test";
import { deal, discover, groupSource, JOBS, plan, WEIGHTS } from "./run";

test("every test file runs exactly once, and every file JOBS and WEIGHTS name is a test file", () => {
    const files = discover();
    assert.ok(files.length > 100, `${files.length} test files`);
    for (const f of JOBS.flatMap((j) => j.files ?? [])) assert.ok(files.includes(f), `JOBS names ${f}, which is not a test file`);
    for (const f of Object.keys(WEIGHTS)) assert.ok(files.includes(f), `WEIGHTS names ${f}, which is not a test file`);
    assert.deepEqual(plan(files).flatMap((j) => j.files).sort(), files);
});

test("a file goes to the job naming it, else the longest prefix of its path, else the job without either; a split job dealt by weight; the heaviest process first", () => {
    const jobs = [
        { name: "program", prefixes: ["test/"], split: 2 },
        { name: "backups", prefixes: ["test/backups/"] },
        { name: "alone", files: ["test/alone.test.ts"] },
        { name: "units" },
    ];
    const files = ["cli/a.test.ts", "test/a.test.ts", "test/b.test.ts", "test/backups/c.test.ts", "test/c.test.ts", "test/d.test.ts", "test/alone.test.ts"];
    // test/c alone outweighs a, b and d together: it gets a process of its own, the others share the other one.
    const weights = { "test/c.test.ts": 9, "test/a.test.ts": 3, "test/b.test.ts": 2, "test/alone.test.ts": 4, "cli/a.test.ts": 30 };
    assert.deepEqual(plan(files, jobs, weights), [
        { name: "units", files: ["cli/a.test.ts"] },
        { name: "program-1", files: ["test/c.test.ts"] },
        { name: "program-2", files: ["test/a.test.ts", "test/b.test.ts", "test/d.test.ts"] },
        { name: "alone", files: ["test/alone.test.ts"] },
        { name: "backups", files: ["test/backups/c.test.ts"] },
    ]);
    // Heaviest first, each to the lightest process so far: 5 -> 1, 4 -> 2, 3 -> 2 (4 < 5), 2 -> 1; each in path order.
    assert.deepEqual(deal(["w/2", "w/3", "w/4", "w/5"], 2, { "w/2": 2, "w/3": 3, "w/4": 4, "w/5": 5 }), [["w/2", "w/5"], ["w/3", "w/4"]]);
    assert.throws(() => plan(["cli/a.test.ts"], [{ name: "program", prefixes: ["test/"] }]), /cli\/a\.test\.ts belongs to no job/);
});

test("discover finds *.test.ts under the test folders, not the integration and product tests, not node_modules", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "run-discover-"));
    try {
        for (const f of ["test/a.test.ts", "test/x.integration.ts", "test/products/p.products.ts", "policies/t/b.test.ts", "tools/node_modules/m/c.test.ts", "docs/d.test.ts"]) {
            fs.mkdirSync(path.dirname(path.join(root, f)), { recursive: true });
            fs.writeFileSync(path.join(root, f), "");
        }
        assert.deepEqual(discover(root), ["policies/t/b.test.ts", "test/a.test.ts"]);
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
});

test("a group file runs each member's tests, with its own hooks, in a suite named by its path; a failure in one fails the run, the others still run; a member loaded before its suite is an error", () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), "run-group-"));
    try {
        const member = (name: string, body: string) => {
            fs.mkdirSync(path.join(root, "test"), { recursive: true });
            fs.writeFileSync(path.join(root, "test", name), `import assert from "node:assert/strict";\nimport { before, test } from "node:test";\n${body}\n`);
        };
        member("a.test.ts", 'let ready = false;\nbefore(() => { ready = true; });\ntest("a one", () => assert.ok(ready));\ntest("a two", () => assert.fail("a two fails"));');
        member("b.test.ts", 'const x: number = 1;\ntest("b one", () => assert.equal(x, 1));');
        // c requires d, as policies/admission/agreement.test.ts requires the template tests: d's own suite says so.
        member("c.test.ts", 'require("./d.test");\ntest("c one", () => undefined);');
        member("d.test.ts", 'test("d one", () => undefined);');
        const group = path.join(root, "g.test.cjs");
        fs.writeFileSync(group, groupSource(["test/a.test.ts", "test/b.test.ts", "test/c.test.ts", "test/d.test.ts"], root));
        // A run of its own, not a subtest of this one (node:test marks its children with NODE_TEST_CONTEXT).
        const env = { ...process.env };
        delete env.NODE_TEST_CONTEXT;
        const r = spawnSync(process.execPath, ["--import", "tsx", "--test", "--test-reporter=tap", group], { cwd: path.resolve(__dirname, "..", ".."), env, encoding: "utf8" });
        assert.equal(r.status, 1, r.stdout + r.stderr);
        const lines = r.stdout.split("\n");
        const result = (name: string) => lines.find((l) => new RegExp(`^\\s*(not )?ok \\d+ - ${name}$`).test(l))?.trim().replace(/ \d+ -/, " -");
        assert.equal(result("a one"), "ok - a one");
        assert.equal(result("a two"), "not ok - a two");
        assert.equal(result("test/a.test.ts"), "not ok - test/a.test.ts");
        assert.equal(result("b one"), "ok - b one");
        assert.equal(result("test/b.test.ts"), "ok - test/b.test.ts");
        assert.equal(result("d one"), "ok - d one");
        assert.equal(result("test/d.test.ts"), "not ok - test/d.test.ts");
        assert.match(r.stdout, /test\/d\.test\.ts was loaded by another test file of its group before its own suite: give it a job of its own in JOBS of tools\/test\/run\.ts/);
    } finally {
        fs.rmSync(root, { recursive: true, force: true });
    }
});
