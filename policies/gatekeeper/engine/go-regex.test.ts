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

test("RE2 refuses what JavaScript accepts: lookahead, backreferences (issue 22)", () => {
    assert.throws(() => goRegex("^(?=.*prod).*$"), /invalid regular expression .*RE2/);
    assert.throws(() => goRegex("(a)\\1"), /invalid regular expression/);
});

test("a catastrophic-backtracking pattern runs in linear time (issue 22)", { timeout: 10_000 }, () => {
    const t0 = Date.now();
    assert.equal(goRegexMatches("^(a+)+$", `${"a".repeat(5000)}!`), false);
    assert.ok(Date.now() - t0 < 2000, `took ${Date.now() - t0} ms`);
});
