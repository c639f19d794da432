import assert from "node:assert/strict";
import { test } from "node:test";
import { PLAN_BUILTINS } from "../../plan/builtins";
import { RegoSet } from "../../rego/values";
import { regoCompare, regoFormat } from "./pod";

const planSprintf = PLAN_BUILTINS.get("sprintf")!;

test("regoFormat renders as OPA's sprintf %v (strings quoted as Go does, members and keys in code point order)", () => {
    // `opa eval` (1.17.1): sprintf("%v|%v|%v", [0.5, {x | x := ["b", "a\u0007", "\ud83d\ude00", "\uffff"][_]}, {"z": 1, "a": [2]}])
    const members = new Set(["b", "a\u0007", "\ud83d\ude00", "\uffff"]);
    assert.equal([0.5, members, { z: 1, a: [2] }].map(regoFormat).join("|"), '0.5|{"a\\a", "b", "\\uffff", "😀"}|{"a": [2], "z": 1}');
    assert.equal(regoFormat("bare"), "bare");
    assert.equal(regoFormat(undefined), "");
});

test("regoFormat is the compiled plans' %v: Gatekeeper's input numbers as Go prints a float64", () => {
    const values: unknown[] = [1000000, -2500000, 1e21, 0.000001, 7, true, null, [1000000, "x"], { n: 1000000 }, new Set([1000000, "\u0000"])];
    for (const v of values) {
        const planValue = v instanceof Set ? new RegoSet() : v;
        if (v instanceof Set) for (const m of v) (planValue as RegoSet).add(m);
        assert.equal(regoFormat(v), planSprintf("%v", [planValue]), `regoFormat(${String(v)})`);
    }
    assert.equal(regoFormat(1000000), "1e+06");
});

test("regoCompare orders strings by code point, as Go does (not by UTF-16 unit)", () => {
    assert.equal(regoCompare("\ud83d\ude00", "\uffff"), 1);
    assert.deepEqual(["b", null, 2, "a", [1], { a: 1 }, false].sort(regoCompare), [null, false, 2, "a", "b", [1], { a: 1 }]);
});
