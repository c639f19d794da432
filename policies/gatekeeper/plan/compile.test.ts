/**
 * The plan compiler's own decisions: what it refuses (the pack then runs the Wasm module:
 * test/planFallback.test.ts), and what it remembers between evaluations (only while the data
 * document stays).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { opaBinary } from "../wasm/opa";
import { compilePlan, planToJavaScript, UnsupportedPlan, type Plan } from "./compile";
import { toJSON } from "../rego/values";

const opa = opaBinary();
const skip = existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)`;

/** `opa build -t plan` of one Rego v1 module, entrypoint `t/<rule>`. */
function planOf(rego: string, rule: string): Plan {
    const dir = mkdtempSync(path.join(tmpdir(), "plan-compile-"));
    try {
        writeFileSync(path.join(dir, "t.rego"), rego);
        const r = spawnSync(opa, ["build", "-t", "plan", "-e", `t/${rule}`, "-o", "b.tar.gz", "t.rego"], { cwd: dir, encoding: "utf8" });
        assert.equal(r.status, 0, r.stderr);
        assert.equal(spawnSync("tar", ["-xzf", "b.tar.gz", "/plan.json"], { cwd: dir }).status, 0);
        return JSON.parse(readFileSync(path.join(dir, "plan.json"), "utf8")) as Plan;
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
}

const result = (set: unknown[]) => (toJSON(set) as { result: unknown }[])[0]?.result;

test("a plan using a statement or a built-in the compiler lacks is refused, naming it", { skip }, () => {
    const withStmt = planOf("package t\n\nf := input.x\n\ng := y if {\n\ty := f with input.x as 2\n}\n", "g");
    assert.throws(() => compilePlan(withStmt), (e: unknown) => e instanceof UnsupportedPlan && /uses the statement WithStmt/.test((e as Error).message));
    const digest = planOf('package t\n\ng := json.marshal({"a": 1})\n', "g");
    assert.throws(() => compilePlan(digest), (e: unknown) => e instanceof UnsupportedPlan && /calls built-in function json\.marshal, which the plan compiler does not provide/.test((e as Error).message));
});

test("a function that reads only data is remembered for one data document, not beyond", { skip }, () => {
    const plan = planOf("package t\n\nnames(kind) := {n | some n, _ in data.inventory[kind]}\n\ng contains n if {\n\tsome n in names(input.kind)\n}\n", "g");
    const evaluate = compilePlan(plan);
    const a = { inventory: { Pod: { p1: {}, p2: {} } } };
    const b = { inventory: { Pod: { p3: {} } } };
    assert.deepEqual(result(evaluate({ kind: "Pod" }, a)), ["p1", "p2"]);
    assert.deepEqual(result(evaluate({ kind: "Pod" }, a)), ["p1", "p2"]);
    assert.deepEqual(result(evaluate({ kind: "Pod" }, b)), ["p3"], "another data document: computed again");
    assert.deepEqual(result(evaluate({ kind: "Service" }, b)), [], "another argument");
});

test("a new array's appends are written as one literal, and a collection never added to is the shared empty one", { skip }, () => {
    const plan = planOf('package t\n\nmsg := sprintf("%v/%v", [input.a, input.b])\n\nfallback := object.get(input, "missing", {})\n', "msg");
    const js = planToJavaScript(plan);
    assert.match(js, /=\[l\d+,l\d+\];/, "sprintf's arguments made one literal");
    assert.doesNotMatch(js, /l\d+\.push\(/, "no appends left");
    assert.deepEqual(result(compilePlan(plan)({ a: 1, b: "x" }, {})), "1/x");
    const empty = planOf('package t\n\ng := object.get(input, "missing", {})\n', "g");
    assert.match(planToJavaScript(empty), /V\.EMPTY_OBJECT/);
    assert.deepEqual(result(compilePlan(empty)({}, {})), {});
});
