/**
 * Issue 42 class 8: the render's time is linear in a value's length (it grew with its square:
 * 256 KiB took 143 s, 1 MiB more than 31 minutes), and a value longer than any object of the
 * cluster can hold is refused. No speed figure here: the scans run on values long enough that the
 * quadratic one would not finish within the test's time-out (the render's speed is `npm run bench`'s).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import { placeholderImages } from "../cli/harness/render";
import { MAX_VALUE_LENGTH } from "../config";
import { PLACEHOLDER_DIGEST } from "../config/imageLock";
import { urlCredentialProblem } from "../config/schema";
import { configProblems as problems } from "./configProblems";

describe("issue 42 class 8: long values", () => {
    it("the scans of the render finish on 4 MiB values of every shape (the quadratic scan took 64 s for 128 KiB, so hours for these)", { timeout: 60_000 }, () => {
        for (const unit of ["a", "a://", "a@", "a://b?token=", " "]) {
            const text = unit.repeat(2 ** 22 / unit.length);
            assert.deepEqual(placeholderImages(text), []);
            urlCredentialProblem(text);
        }
        assert.deepEqual(placeholderImages(`"image":"registry.example.com/ops/booking:1.4.0@${PLACEHOLDER_DIGEST}","x":"${"a".repeat(1000)}@${PLACEHOLDER_DIGEST}"`), ["aaaa".repeat(250), "registry.example.com/ops/booking:1.4.0"].sort());
    });

    it("a value longer than 1 MiB is refused before anything else, naming the key (a secret's length only)", () => {
        assert.match(problems({ issuersCaOrganization: "a".repeat(MAX_VALUE_LENGTH + 1) }), /ops:issuersCaOrganization: is 1048577 characters long; expected at most 1048576 characters/);
        assert.match(problems({ bookingArgs: ["a".repeat(MAX_VALUE_LENGTH)] }), /ops:bookingArgs: is \d+ characters long/);
        assert.equal(problems({ issuersCaOrganization: "a".repeat(1000) }), "");
    });
});
