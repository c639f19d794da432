/**
 * Rules specialised by their callers' constant keys (./specialize.ts): the compiled plan gives
 * what `opa eval` (topdown, Gatekeeper's engine) gives, where the plan as OPA writes it computes
 * the rule's whole set: including where an element of another field raises a conflict that
 * topdown never meets.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { planToJavaScript, type Plan } from "./compile";
import { compiled, opaMissing as skip, withOpa } from "./opaCompare";
import { specializeRules } from "./specialize";

/** The library's shape (containerlimits and its kin): elements of every spec field, read by their field. */
const LIBRARY_SHAPE = `package t

exempt(c) := true if c.image == "skip"
exempt(c) := false if c.image == "skip"

violation contains {"msg": msg} if general[{"msg": msg, "field": "containers"}]
violation contains {"msg": msg} if general[{"msg": msg, "field": "initContainers"}]

general contains {"msg": msg, "field": field} if {
	c := input.spec[field][_]
	not exempt(c)
	not c.resources.limits.cpu
	msg := sprintf("%v in %v has no cpu limit", [c.name, field])
}
`;

const containers = (names: string[], image = "app") => names.map((name) => ({ name, image, resources: name.endsWith("-ok") ? { limits: { cpu: "1" } } : {} }));
const inputs = [
    { spec: { containers: containers(["a", "b-ok"]), initContainers: containers(["init"]) } },
    { spec: { containers: containers(["a"]), volumes: [{ name: "v", image: "skip" }] } },
    { spec: { containers: [{ name: "x", image: "skip" }], initContainers: containers(["i-ok"]) } },
    { spec: { containers: { "not-a-list": { name: "o", image: "app" } }, ephemeralContainers: containers(["e"]) } },
    { spec: { initContainers: [], hostNetwork: true } },
    { spec: "none" },
];

/** The compiled plan's outcomes against opa's, an error against an error (the plan words conflicts as the Wasm module does; ../wasm/rule.ts words them as topdown). */
const judged = (plan: Plan, expected: ({ value: unknown } | { error: string })[], given: unknown[] = inputs) =>
    given.forEach((input, i) => {
        const got = compiled(plan, input, {});
        assert.deepEqual("error" in got ? { error: true } : got, "error" in expected[i] ? { error: true } : expected[i], JSON.stringify(input));
    });

test("a rule read for the elements of one field is computed for that field only: opa eval's result, conflicts in other fields never met", { skip }, () => {
    const { plan, expected } = withOpa(LIBRARY_SHAPE, "violation", inputs, {});
    // input 1's volume and input 2's container make exempt conflict: topdown meets the container only.
    assert.ok(!("error" in expected[1]), "topdown never evaluates the volumes");
    assert.match((expected[2] as { error: string }).error, /functions must not produce multiple outputs/);
    const js = planToJavaScript(plan);
    assert.equal(js.match(/V\.scanKeysPinned\(src,"(initContainers|containers)"\)/g)?.length, 2, "each copy looks its field up");
    judged(plan, expected);
});

test("a head whose field is a constant: a copy keeps the bodies of that constant only", { skip }, () => {
    const rego = `package t

violation contains msg if general[{"msg": msg, "field": "containers"}]

general contains {"msg": sprintf("%v", [c.name]), "field": "containers"} if c := input.spec.containers[_]
general contains {"msg": sprintf("%v", [c.name]), "field": "volumes"} if c := input.spec.volumes[_]
general contains {"msg": "no field"} if input.spec.hostNetwork
`;
    const { plan, expected } = withOpa(rego, "violation", inputs, {});
    const copy = specializeRules(plan).funcs!.funcs!.find((f) => f.name.includes("#"))!;
    assert.ok(copy, "a copy is made");
    assert.equal(JSON.stringify(copy.blocks).match(/"NopStmt"/g)?.length, 2, "the volumes' and the field-less body add nothing");
    judged(plan, expected);
});

test("a rule read whole elsewhere keeps its whole set there; a rule adding an element of a shape the copy cannot tell is not copied", { skip }, () => {
    const told = `package t

violation contains msg if general[{"msg": msg, "field": "containers"}]
violation contains sprintf("%v elements", [count(general)]) if true

general contains {"msg": c.name, "field": field} if {
	c := input.spec[field][_]
	is_object(c)
}
`;
    const rego = `${told}
general contains x if {
	c := input.spec[field][_]
	is_object(c)
	some x in [{"msg": c.name, "field": field}, {"msg": sprintf("%v again", [c.name]), "field": "containers"}]
}
`;
    const { plan, expected } = withOpa(rego, "violation", inputs, {});
    assert.ok(!specializeRules(plan).funcs!.funcs!.some((f) => f.name.includes("#")), "no copy: x is not built in place");
    judged(plan, expected);
    const copied = withOpa(told, "violation", inputs, {});
    assert.ok(specializeRules(copied.plan).funcs!.funcs!.some((f) => f.name.includes("#")), "without that body, a copy");
    judged(copied.plan, copied.expected);
});

test("a scan whose body first requires its key to be a literal looks the key up, over an object, a set, an array and a scalar", { skip }, () => {
    const rego = `package t

s := {"a", "b", true}
o := {"a": 1, "b": 2, 3: 4}

g := [
	[v | v := input.x[k]; k == "a"],
	[k | s[k]; k == "a"],
	[k | s[k]; k == true],
	[v | v := o[k]; k == "b"],
	[v | v := input.list[k]; k == "0"],
	[v | v := input.n[k]; k == "a"],
]
`;
    const ins = [{ x: { a: 1, b: 2 }, list: ["zero"], n: 7 }, { x: { b: 2 }, list: [], n: "a" }, { x: ["a"], list: {"0": "x"} }];
    const { plan, expected } = withOpa(rego, "g", ins, {});
    assert.ok((planToJavaScript(plan).match(/V\.scanKeysPinned/g)?.length ?? 0) >= 5, "looked up");
    judged(plan, expected, ins);
});
