/**
 * Issue 42 class 8: the render's time is linear in a value's length (it grew with its square:
 * 256 KiB took 143 s, 1 MiB more than 31 minutes), and a value longer than any object of the
 * cluster can hold is refused. No speed figure here: the test compares how the scans' time grows
 * with the length (16x the length: a linear scan about 16x the time, the quadratic one 256x).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { placeholderImages } from "../cli/harness/render";
import { MAX_VALUE_LENGTH } from "../config";
import { PLACEHOLDER_DIGEST } from "../config/imageLock";
import { urlCredentialProblem } from "../config/schema";
import { configProblems as problems } from "./configProblems";

/** Milliseconds of a call, the median of three. */
function ms(f: () => unknown): number {
    const t = [0, 1, 2].map(() => {
        const s = process.hrtime.bigint();
        f();
        return Number(process.hrtime.bigint() - s) / 1e6;
    });
    return t.sort((a, b) => a - b)[1];
}

describe("issue 42 class 8: long values", () => {
    it("the scans of the render over a long value grow with its length, not its square (16x the length: under 64x the time)", () => {
        for (const [name, scan] of [["placeholder images", placeholderImages], ["credentials in URLs", urlCredentialProblem]] as const) {
            for (const unit of ["a", "a://", "a@"]) {
                const small = unit.repeat(2 ** 15 / unit.length);
                const large = unit.repeat(2 ** 19 / unit.length);
                const [a, b] = [ms(() => scan(small)), ms(() => scan(large))];
                assert.ok(b < Math.max(a, 1) * 64, `${name} on ${JSON.stringify(unit)}: ${a.toFixed(1)} ms for 32 KiB, ${b.toFixed(1)} ms for 512 KiB`);
            }
        }
        assert.deepEqual(placeholderImages(`"image":"registry.example.com/ops/booking:1.4.0@${PLACEHOLDER_DIGEST}","x":"${"a".repeat(1000)}@${PLACEHOLDER_DIGEST}"`), ["aaaa".repeat(250), "registry.example.com/ops/booking:1.4.0"].sort());
    });

    it("a value longer than 1 MiB is refused before anything else, naming the key (a secret's length only)", () => {
        assert.match(problems({ issuersCaOrganization: "a".repeat(MAX_VALUE_LENGTH + 1) }), /ops:issuersCaOrganization: is 1048577 characters long; expected at most 1048576 characters/);
        assert.match(problems({ bookingArgs: ["a".repeat(MAX_VALUE_LENGTH)] }), /ops:bookingArgs: is \d+ characters long/);
        assert.equal(problems({ issuersCaOrganization: "a".repeat(1000) }), "");
    });
});
