import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { test } from "node:test";
import { opaBinary } from "../wasm/opa";
import { regoSprintf } from "./sprintf";
import { parseRegoValue } from "../wasm/value";

/** [format, arguments as Rego text, what Go's fmt (OPA's topdown sprintf) prints]. */
const CASES: [string, string, string][] = [
    ["%v", '[[1, "a"]]', '[1, "a"]'],
    ["%v", '[{"b", "a"}]', '{"a", "b"}'],
    ["%v", "[set()]", "set()"],
    ["%v", '[{"b": 1, "a": [true, null]}]', '{"a": [true, null], "b": 1}'],
    ["%v and %v", '["x"]', "x and %!v(MISSING)"],
    ["%d", '["x"]', "%!d(string=x)"],
    ["%s", "[5]", "%!s(int=5)"],
    ["a", '["b", 2]', "a%!(EXTRA string=b, int=2)"],
    ["%05d|%-4d|%+d", "[42, 7, 3]", "00042|7   |+3"],
    ["%.2f %e %g", "[3.14159, 1234.5, 0.000012]", "3.14 1.234500e+03 1.2e-05"],
    ["%v %v %v", "[1.5, 123456.5, 1234567.5]", "1.5 123456.5 1.2345675e+06"],
    ["%q", '["a\\"b"]', '"a\\"b"'],
    ["%x|%X", '["hi", "hi"]', "6869|6869"],
    ["%v", "[12345678901234567890]", "12345678901234567890"],
    ["%d%%", "[50]", "50%"],
    ["%v", '[["é\\n"]]', '["é\\n"]'],
    ["%5s|%-5s|%.1s", '["ab", "cd", "xyz"]', "   ab|cd   |x"],
    ["%t", "[true]", "%!t(string=true)"],
    ["%v", "[null]", "null"],
    ["%", "[1]", "%!(NOVERB)%!(EXTRA int=1)"],
    ["%d items", "[-3]", "-3 items"],
    ["%v", '[{"k": {"z", 1}}]', '{"k": {1, "z"}}'],
    ["%x", "[255]", "ff"],
    ["%.1f|%v", "[1e21, 1e21]", "1000000000000000000000.0|1e+21"],
    ["%.2f|%5.1f|%-4d|%x", '["null", "null", "ab", 1.5]', "%!f(string=nu)|%!f(string=    n)|%!d(string=ab  )|0x1.8p+00"],
    ["%X|%x|%b|%x", "[0.1, 1024.0, 1.5, 0.0]", "0X1.999999999999AP-04|0x1p+10|6755399441055744p-52|0x0p+00"],
    // A number keeps OPA's text of it (NumberText where its float64 would print otherwise): 2.0 is no int to %d.
    ["%v|%d|%v", '[[1.0, 1e6, 1000000, 0.50], 2.0, {1.0: "a"}]', '[1.0, 1e6, 1000000, 0.50]|%!d(float64=2)|{1.0: "a"}'],
];

const parsed = (args: string) => parseRegoValue(args) as unknown[];

test("sprintf prints as Go's fmt does (OPA's topdown/strings.go): composites, errors, flags", () => {
    for (const [format, args, want] of CASES) assert.equal(regoSprintf(format, parsed(args)), want, `sprintf(${JSON.stringify(format)}, ${args})`);
});

const opa = opaBinary();
test("sprintf: the table above is what opa eval prints", { skip: existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)` }, () => {
    const query = `[${CASES.map(([format, args]) => `sprintf(${JSON.stringify(format)}, ${args})`).join(", ")}]`;
    const r = spawnSync(opa, ["eval", "--v0-compatible", "-f", "json", query], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stderr);
    const got = JSON.parse(r.stdout).result[0].expressions[0].value as string[];
    assert.deepEqual(got, CASES.map(([, , want]) => want));
});
