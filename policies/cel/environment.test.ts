import assert from "node:assert/strict";
import { test } from "node:test";
import { goReplace, kubernetesCelEnvironment } from "./environment";

const env = kubernetesCelEnvironment();
const cel = (expression: string) => env.parse(expression)({});

const NAME = "string.replace (cel-go ext/strings.go: Go's strings.Replace / ReplaceAll)";
{
    // Go's own table for strings.Replace (go/src/strings/strings_test.go ReplaceTests), copied as-is.
    const GO_REPLACE_TESTS: Array<[string, string, string, number, string]> = [
        ["hello", "l", "L", 0, "hello"],
        ["hello", "l", "L", -1, "heLLo"],
        ["hello", "x", "X", -1, "hello"],
        ["", "x", "X", -1, ""],
        ["radar", "r", "<r>", -1, "<r>ada<r>"],
        ["", "", "<>", -1, "<>"],
        ["banana", "a", "<>", -1, "b<>n<>n<>"],
        ["banana", "a", "<>", 1, "b<>nana"],
        ["banana", "a", "<>", 1000, "b<>n<>n<>"],
        ["banana", "an", "<>", -1, "b<><>a"],
        ["banana", "ana", "<>", -1, "b<>na"],
        ["banana", "", "<>", -1, "<>b<>a<>n<>a<>n<>a<>"],
        ["banana", "", "<>", 10, "<>b<>a<>n<>a<>n<>a<>"],
        ["banana", "", "<>", 6, "<>b<>a<>n<>a<>n<>a"],
        ["banana", "", "<>", 5, "<>b<>a<>n<>a<>na"],
        ["banana", "", "<>", 1, "<>banana"],
        ["banana", "a", "a", -1, "banana"],
        ["banana", "a", "a", 1, "banana"],
        ["☺☻☹", "", "<>", -1, "<>☺<>☻<>☹<>"],
    ];
    test(`${NAME}: Go's table of strings.Replace`, () => {
        for (const [s, old, replacement, n, out] of GO_REPLACE_TESTS) {
            const call = `${JSON.stringify(s)}.replace(${JSON.stringify(old)}, ${JSON.stringify(replacement)}`;
            assert.equal(goReplace(s, old, replacement, n), out, `Replace(${s}, ${old}, ${replacement}, ${n})`);
            assert.equal(cel(`${call}, ${n})`), out, `${call}, ${n})`);
            if (n === -1) assert.equal(cel(`${call})`), out, `${call})`);
        }
    });

    test(`${NAME}: the examples of cel-go's documentation`, () => {
        assert.equal(cel(`'hello hello'.replace('he', 'we')`), "wello wello");
        assert.equal(cel(`'hello hello'.replace('he', 'we', -1)`), "wello wello");
        assert.equal(cel(`'hello hello'.replace('he', 'we', 1)`), "wello hello");
        assert.equal(cel(`'hello hello'.replace('he', 'we', 0)`), "hello hello");
    });

    test(`${NAME}: every '*', as the library's exemptImages prefixes use it`, () => {
        assert.deepEqual(cel(`['gcr.io/x/*', 'a*b*'].map(i, string(i).replace('*', ''))`), ["gcr.io/x/", "ab"]);
    });
}
