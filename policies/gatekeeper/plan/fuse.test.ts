/**
 * Bodies that start alike (./fuse.ts): the compiled plan gives what `opa eval` gives with the
 * shared statements run once and the scans of the same collection fused; where fused scans meet
 * a conflict, the conflict reported is the one evaluation as written meets first.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { planToJavaScript, type Plan } from "./compile";
import { fuseBlocks } from "./fuse";
import { compiled, opaMissing as skip, withOpa } from "./opaCompare";

const fused = (plan: Plan) => fuseBlocks(plan, { pureCall: () => true }).reordered.size;

/** An error against an error (the compiled plan words conflicts as the Wasm module does, naming the same row), else the value. */
function judged(plan: Plan, inputs: unknown[], expected: ({ value: unknown } | { error: string; row?: number })[]): void {
    inputs.forEach((input, i) => {
        const got = compiled(plan, input, {});
        const want = expected[i];
        if ("error" in want) {
            assert.ok("error" in got, `${JSON.stringify(input)}: an error, as opa's ${want.error}`);
            assert.equal(Number(/^t\.rego:(\d+):/.exec(got.error)?.[1]), want.row, `${JSON.stringify(input)}: ${got.error} names the row opa names`);
        } else assert.deepEqual(got, want, JSON.stringify(input));
    });
}

test("bodies walking the same containers: is_exempt and the walk once per container, opa eval's result", { skip }, () => {
    const rego = `package t

exempt(c) if c.image == "skip"

cpu(v) := v if is_number(v)
cpu(v) := to_number(trim_suffix(v, "m")) / 1000 if endswith(v, "m")

violation contains {"msg": msg, "field": field} if {
	c := input.spec[field][_]
	not exempt(c)
	not c.resources.limits.cpu
	msg := sprintf("%v: no cpu limit", [c.name])
}
violation contains {"msg": msg, "field": field} if {
	c := input.spec[field][_]
	not exempt(c)
	not c.resources.limits.memory
	msg := sprintf("%v: no memory limit", [c.name])
}
violation contains {"msg": msg, "field": field} if {
	c := input.spec[field][_]
	not exempt(c)
	cpu(c.resources.limits.cpu) > 2
	msg := sprintf("%v: over 2 cpus", [c.name])
}
`;
    const c = (name: string, limits: unknown, image = "app") => ({ name, image, resources: { limits } });
    const inputs = [
        { spec: { containers: [c("a", {}), c("b", { cpu: "3000m", memory: "1Gi" }), c("s", {}, "skip")], initContainers: [c("i", { cpu: 1 })] } },
        { spec: { containers: [c("a", { cpu: 3, memory: "1" })], volumes: [{ name: "v" }], hostNetwork: true } },
        { spec: { containers: "none" } },
        { spec: {} },
    ];
    const { plan, expected } = withOpa(rego, "violation", inputs, {});
    assert.ok(fused(plan) > 0, "the scans are fused");
    const lines = planToJavaScript(plan).split("\n");
    const calls = (line: string | undefined) => line?.match(/=f0\(l0,l1,l\d+\);/g)?.length;
    // exempt (f0) is called by the fused rule once per container, by its copy as written (for a conflict, U) once per body.
    assert.equal(calls(lines.find((l) => /^function g\d+\(l0,l1\)\{if\(U\)/.test(l))), 1);
    assert.equal(calls(lines.find((l) => l.startsWith("function u"))), 3);
    judged(plan, inputs, expected);
});

test("a conflict in fused scans: the one evaluation as written meets first is reported", { skip }, () => {
    // first(x) conflicts for an element whose a and b differ; second(x) for one whose c and d differ.
    const rego = `package t

first(x) := x.a
first(x) := x.b

second(x) := x.c
second(x) := x.d

violation contains m if {
	x := input.items[_]
	first(x) == "bad"
	m := "first"
}
violation contains m if {
	x := input.items[_]
	second(x) == "bad"
	m := "second"
}
`;
    const inputs = [
        // The first element conflicts in the second body, the second element in the first: as written, the first body's conflict comes first.
        { items: [{ a: 1, b: 1, c: 1, d: 2 }, { a: 1, b: 2, c: 1, d: 1 }] },
        { items: [{ a: 1, b: 1, c: 1, d: 2 }] },
        { items: [{ a: "bad", b: "bad", c: 1, d: 1 }] },
        { items: [] },
    ];
    const { plan, expected } = withOpa(rego, "violation", inputs, {});
    assert.ok(fused(plan) > 0, "the scans are fused");
    assert.ok("error" in expected[0] && expected[0].row === 4, "opa names the first function's second definition (row 4)");
    judged(plan, inputs, expected);
});

test("an else chain whose later bodies start alike is left as written: each runs only where the one before set nothing", { skip }, () => {
    const rego = `package t

msg := sprintf("a %v", [input.x]) if {
	input.a
} else := sprintf("b %v", [input.x]) if {
	input.b
	input.x != 0
} else := sprintf("c %v", [input.x]) if {
	input.b
}
`;
    const inputs = [{ a: true, x: 1 }, { b: true, x: 1 }, { b: true, x: 0 }, { x: 2 }];
    const { plan, expected } = withOpa(rego, "msg", inputs, {});
    judged(plan, inputs, expected);
});
