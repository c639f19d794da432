/**
 * Tests that need something this checkout may not have (../shared, a binary): one helper, so that
 * each such test
 *   - is reported as skipped, with a message saying what is missing, where it is absent;
 *   - fails, with the same message, under CI=true (CI must never skip silently).
 * node:test (Node 20) does not count a skipped `describe` in the summary's "skipped"; a skipped
 * suite therefore holds one skipped test that names the reason.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, test } from "node:test";

export const REPO_ROOT = path.resolve(__dirname, "..");
/** The shared data next to the repository (specification, conformance cases, reference schemas). */
export const SHARED_DIR = path.resolve(REPO_ROOT, "..", "shared");

export const sharedPath = (...parts: string[]) => path.join(SHARED_DIR, ...parts);

/** What is missing of ../shared/<parts> (one message), or undefined when everything is there. */
export function missingShared(...files: string[][]): string | undefined {
    const missing = files.map((parts) => sharedPath(...parts)).filter((f) => !fs.existsSync(f));
    return missing.length === 0 ? undefined : `needs ${missing.map((f) => path.relative(REPO_ROOT, f)).join(", ")} (the shared data checked out next to the repository as ../shared)`;
}

const inCi = () => process.env.CI === "true";

/** A test that runs when `missing` is undefined; otherwise skipped (failed under CI=true) with the message. */
export function testNeeding(name: string, fn: () => void | Promise<void>, missing: string | undefined): void {
    if (!missing) test(name, fn);
    else if (inCi()) test(name, () => assert.fail(`${missing}; CI=true, so this is a failure, not a skip`));
    else test(name, { skip: missing }, () => undefined);
}

/** A suite that runs when `missing` is undefined; otherwise one skipped test (a failed one under CI=true) stands for it. */
export function suiteNeeding(name: string, fn: () => void, missing: string | undefined): void {
    if (!missing) describe(name, fn);
    else describe(name, () => testNeeding("the whole suite", () => undefined, missing));
}
