import assert from "node:assert/strict";
import { test } from "node:test";
import { goRegex, goRegexMatches } from "./go-regex";

test("matches anywhere in the value unless anchored, like Rego's regex.match", () => {
    assert.equal(goRegexMatches("agilebank", "me.agilebank.demo"), true);
    assert.equal(goRegexMatches("^agilebank$", "me.agilebank.demo"), false);
});

test("leading inline flags and \\A \\z anchors are translated", () => {
    assert.equal(goRegexMatches("(?i)^OWNER$", "owner"), true);
    assert.equal(goRegexMatches("\\Aab\\z", "ab"), true);
    assert.equal(goRegexMatches("\\Aab\\z", "xab"), false);
});

test("an invalid expression is an error quoting it", () => {
    assert.throws(() => goRegex("(unclosed"), /invalid regular expression "\(unclosed"/);
});
