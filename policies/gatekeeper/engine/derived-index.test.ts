import assert from "node:assert/strict";
import { test } from "node:test";
import { derivedFrom } from "./derived-index";

test("builds derived data once per list and name", () => {
    const list = [1, 2, 3];
    let builds = 0;
    const sum = (l: number[]) => (builds++, l.reduce((a, b) => a + b, 0));
    assert.equal(derivedFrom(list, "sum", sum), 6);
    assert.equal(derivedFrom(list, "sum", sum), 6);
    assert.equal(builds, 1);
    assert.equal(derivedFrom(list, "count", (l) => l.length), 3);
    assert.equal(derivedFrom([4], "sum", sum), 4);
    assert.equal(builds, 2);
});
