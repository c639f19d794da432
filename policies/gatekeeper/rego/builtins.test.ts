import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { SHARED_BUILTINS } from "./builtins";
import { opaBinary } from "../wasm/opa";

/** Versions around the edges of OPA's internal/semver Parse: prefix, signs, leading zeros, int64, identifiers. */
const VERSIONS = [
    "1.2.3", "v1.2.3", "vv1.2.3", "V1.2.3", "1.2", "1.2.3.4", "01.002.0003", "+1.-2.+0", "1.2.3-", "1.2.3+", "1.2.3-alpha", "1.2.3-alpha.1",
    "1.2.3-alpha.beta", "1.2.3-alpha.10", "1.2.3-alpha.9", "1.2.3-1", "1.2.3-rc.1+build.5", "1.2.3+build", "1.2.3+b..c", "1.2.3-a..b",
    "1.2.3-a_b", "1.2.3-é", "9223372036854775807.0.0", "9223372036854775808.0.0", "-9223372036854775808.0.0", "1.2.3-99999999999999999999",
    "1.2.3-x-y", "1.2.3+x+y", "", "v", "1..3", " 1.2.3", "1.2.3 ", "1_0.2.3", "0x1.2.3", "1.2.3-A", "1.2.3-a",
    "2.0.0", "1.10.0", "1.9.0",
];

const opa = opaBinary();
test("semver.is_valid and semver.compare of the plans and the Wasm host are OPA's (opa eval, every pair)", { skip: existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)` }, () => {
    const dir = mkdtempSync(path.join(tmpdir(), "semver-oracle-"));
    try {
        writeFileSync(path.join(dir, "data.json"), JSON.stringify({ versions: VERSIONS }));
        const query = "x := {\"valid\": [[v, semver.is_valid(v)] | some v in data.versions], \"compare\": [[a, b, semver.compare(a, b)] | some a in data.versions; semver.is_valid(a); some b in data.versions; semver.is_valid(b)]}";
        const r = spawnSync(opa, ["eval", "-f", "json", "-d", path.join(dir, "data.json"), query], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
        assert.equal(r.status, 0, r.stderr);
        const expected = JSON.parse(r.stdout).result[0].bindings.x as { valid: [string, boolean][]; compare: [string, string, number][] };
        const isValid = SHARED_BUILTINS.get("semver.is_valid")!;
        const compare = SHARED_BUILTINS.get("semver.compare")!;
        assert.deepEqual(VERSIONS.map((v) => [v, isValid(v)]), expected.valid);
        const mine = expected.compare.map(([a, b]) => [a, b, compare(a, b)]);
        assert.deepEqual(mine, expected.compare);
        assert.ok(expected.valid.filter(([, ok]) => ok).length >= 15, "enough valid versions to compare");
        assert.equal(isValid(1), false, "a non-string is not a valid version (no error)");
        assert.throws(() => compare("1.2.3", "nope"), /nope/, "an invalid operand is an error (undefined in Gatekeeper's non-strict mode)");
        // Versions opa's semver.compare never returns on (checked by hand: opa eval ran until killed).
        assert.throws(() => compare("1.2.3-01", "1.2.3-1"), /does not terminate in OPA/);
        assert.throws(() => compare("1.2.3-99999999999999999999", "1.2.3-99999999999999999998"), /does not terminate in OPA/);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
