/**
 * Joins (./join.ts): a scan over data compared with a value fixed before it is looked up in an
 * index, and gives what `opa eval` gives (the order of arrays built from it included); where
 * skipping the other elements could be seen (a conflict in the skipped work), the scan runs as
 * written.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { compilePlan, planToJavaScript } from "./compile";
import { raiseFreeFunctions } from "./join";
import { compiled, opaMissing as skip, withOpa } from "./opaCompare";
import { toJSON } from "../rego/values";

/** Services by namespace, as Gatekeeper's sync holds them: selectors repeated, one missing, one an object of another shape. */
function inventory(): unknown {
    const namespace: Record<string, unknown> = {};
    for (let n = 0; n < 6; n++) {
        const services: Record<string, unknown> = {};
        for (let s = 0; s < 8; s++) {
            const name = `svc-${s}`;
            const selector = s === 7 ? undefined : s === 6 ? { app: `a${n % 2}`, tier: ["x"] } : { app: `a${s % 3}` };
            services[name] = { kind: "Service", metadata: { name, namespace: `ns-${n}` }, spec: { ...(selector ? { selector } : {}), ports: [{ port: 80 + (s % 2) }, { port: 443 }], weight: s % 4 } };
        }
        namespace[`ns-${n}`] = { v1: { Service: services } };
    }
    return { inventory: { namespace } };
}

const inputs = [
    { object: { metadata: { name: "svc-1", namespace: "ns-0" }, spec: { selector: { app: "a1" }, ports: [{ port: 81 }], weight: 1 } } },
    { object: { metadata: { name: "new", namespace: "ns-9" }, spec: { selector: { app: "a0" }, ports: [{ port: 443 }], weight: 3 } } },
    { object: { metadata: { name: "odd", namespace: "ns-1" }, spec: { selector: { app: "a1", tier: ["x"] }, ports: [], weight: "3" } } },
    { object: { metadata: { name: "none", namespace: "ns-2" }, spec: {} } },
];

const shapes: [string, string, string][] = [
    [
        "a selector flattened by a function, compared with the review's (Gatekeeper's unique-service-selector)",
        `package t

flat(obj) := concat(",", sort([sprintf("%v:%v", [k, v]) | some k, v in obj.spec.selector]))

same(o, r) if {
	o.metadata.namespace == r.metadata.namespace
	o.metadata.name == r.metadata.name
}

g contains msg if {
	mine := flat(input.object)
	other := data.inventory.namespace[ns][_].Service[name]
	not same(other, input.object)
	flat(other) == mine
	msg := sprintf("%v/%v", [ns, name])
}
`,
        "g",
    ],
    [
        "an object compared whole, and an array of the names found (its order is the scans')",
        `package t

g := [[ns, name] |
	other := data.inventory.namespace[ns][_].Service[name]
	other.spec.selector == input.object.spec.selector
]
`,
        "g",
    ],
    [
        "a value found by a scan inside each element, per value of a scan over the review (Gatekeeper's unique-ingress-host)",
        `package t

g contains [port, ns, name] if {
	port := input.object.spec.ports[_].port
	other := data.inventory.namespace[ns][v].Service[name]
	startswith(v, "v")
	other.spec.ports[_].port == port
	other.metadata.name != input.object.metadata.name
}
`,
        "g",
    ],
    [
        "a number compared with the review's, where 3 and \"3\" differ",
        `package t

g contains name if {
	w := input.object.spec.weight
	some ns
	other := data.inventory.namespace[ns].v1.Service[name]
	other.spec.weight == w
}
`,
        "g",
    ],
];

for (const [what, rego, rule] of shapes) {
    test(`a join: ${what}: opa eval's result, the scan looked up`, { skip }, () => {
        const data = inventory();
        const { plan, expected } = withOpa(rego, rule, inputs, data);
        assert.match(planToJavaScript(plan), /new V\.JoinIndex\(\)/, "compiled as a join");
        inputs.forEach((input, i) => assert.deepEqual(compiled(plan, input, data), expected[i], JSON.stringify(input)));
        // The index is kept for the same data document, and made again for another.
        const fewer = { inventory: { namespace: { "ns-0": (data as any).inventory.namespace["ns-0"] } } };
        const again = withOpa(rego, rule, inputs, fewer);
        const evaluate = compilePlan(plan);
        for (const [d, exp] of [[data, expected], [fewer, again.expected], [data, expected]] as const) {
            inputs.forEach((input, i) => assert.deepEqual({ value: (toJSON(evaluate(input, d)) as { result: unknown }[])[0]?.result }, exp[i]));
        }
    });
}

test("no join where the skipped work could be seen: a conflict in what the scan would have computed for another element", { skip }, () => {
    // label(o) has two definitions that do not exclude each other: for an element whose two labels differ, evaluation stops.
    const rego = `package t

label(o) := o.spec.selector.app if o.spec.ports[0].port == 80
label(o) := "web" if o.spec.ports[1].port == 443

g contains name if {
	other := data.inventory.namespace[_].v1.Service[name]
	label(other) != ""
	other.spec.weight == input.object.spec.weight
}
`;
    const data = inventory();
    const { plan, expected } = withOpa(rego, "g", inputs, data);
    assert.doesNotMatch(planToJavaScript(plan), /JoinIndex/, "scanned as written");
    assert.ok(expected.some((e) => "error" in e), "opa stops on the conflict");
    inputs.forEach((input, i) => assert.deepEqual("error" in expected[i] ? "error" in compiled(plan, input, data) : compiled(plan, input, data), "error" in expected[i] ? true : expected[i]));
});

test("a function of several definitions whose guards exclude each other cannot conflict: a join", { skip }, () => {
    const rego = `package t

api(k) := k.version if k.group == ""
api(k) := sprintf("%v/%v", [k.group, k.version]) if k.group != ""

same(o, r) if {
	o.metadata.name == r.object.metadata.name
	o.apiVersion == api(r.kind)
}

g contains name if {
	other := data.inventory.namespace[_].v1.Service[name]
	not same(other, input)
	other.spec.weight == input.object.spec.weight
}
`;
    const data = inventory();
    const withKind = inputs.flatMap((i) => [{ ...i, kind: { group: "", version: "v1" } }, { ...i, kind: { group: "apps", version: "v1" } }]);
    const { plan, expected } = withOpa(rego, "g", withKind, data);
    assert.match(planToJavaScript(plan), /new V\.JoinIndex\(\)/);
    withKind.forEach((input, i) => assert.deepEqual(compiled(plan, input, data), expected[i]));
});

test("which functions cannot stop evaluation with a conflict: one definition, or definitions whose guards exclude each other", { skip }, () => {
    const rego = `package t

one(x) := x.a

exclusive(x) := 1 if x.kind == "A"
exclusive(x) := 2 if x.kind == "B"

negated(x) := 1 if x.kind == ""
negated(x) := 2 if x.kind != ""

overlapping(x) := 1 if x.a == ""
overlapping(x) := 2 if x.b == ""

many(x) := y if y := x.items[_]

g := [one(input), exclusive(input), negated(input), overlapping(input), many(input)]
`;
    // Where opa itself stops: two definitions that both hold, or one with two values.
    const stops = (rule: string, input: unknown) => withOpa(`${rego}\n${rule} := ${rule.slice(1)}(input)\n`, rule, [input], {}).expected[0];
    assert.match((stops("_overlapping", { a: "", b: "" }) as { error: string }).error, /functions must not produce multiple outputs/);
    assert.match((stops("_many", { items: [1, 2] }) as { error: string }).error, /functions must not produce multiple outputs/);
    const { plan } = withOpa(rego, "g", [], {});
    const strings = (plan.static.strings ?? []).map((s) => s.value);
    const funcs = plan.funcs?.funcs ?? [];
    const index = new Map(funcs.map((f, i) => [f.name, i]));
    const free = raiseFreeFunctions(funcs, index, (o) => (o.type === "string_index" ? strings[o.value as number] : o.value));
    const of = (name: string) => free[funcs.findIndex((f) => f.name === `g0.data.t.${name}`)];
    assert.deepEqual(
        ["one", "exclusive", "negated", "overlapping", "many"].map((n) => [n, of(n)]),
        [["one", true], ["exclusive", true], ["negated", true], ["overlapping", false], ["many", false]],
    );
});
