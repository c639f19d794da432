/**
 * Configuration errors the checks used to let through (issue 13): letters in a cron field, volume
 * sizes of zero or exabytes, a node port two components claim, and a type error that hid the
 * cross-key problems of the other keys.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import * as s from "../config/schema";

const VALID: Record<string, unknown> = Object.fromEntries(
    s.flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder]),
);
VALID.gatewayToolAdminApiKey = `admin-${"ab12".repeat(16)}`;

function problems(values: Record<string, unknown>): string {
    try {
        loadConfig(mapSource("ops", "test", { ...VALID, ...values }));
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
        return err.message;
    }
    assert.fail("the configuration was accepted");
}

test("a cron field with letters is checked: names only for month and weekday, values in range", () => {
    assert.match(problems({ backupsPostgresSchedule: "0 foo * * *" }), /ops:backupsPostgresSchedule: "0 foo \* \* \*": hour field: failed to parse int from foo; expected a five-field cron schedule/);
    assert.match(problems({ backupsPostgresSchedule: "0 3 * * SUNDAY" }), /ops:backupsPostgresSchedule: "0 3 \* \* SUNDAY": day of week field/);
    assert.match(problems({ backupsPostgresSchedule: "0 3 * FOO *" }), /ops:backupsPostgresSchedule/);
    assert.match(problems({ backupsPostgresSchedule: "*/0 3 * * *" }), /ops:backupsPostgresSchedule/);
    const c = s.cron("a schedule");
    for (const ok of ["0 3 * * *", "*/15 * * * *", "0 3 * JAN-MAR MON-FRI", "0 3 1,15 * 0"]) assert.ok(c.check(ok).ok, ok);
    // Day of week 7: robfig/cron v3.0.1, the API server's parser, bounds it 0..6 (issue 42).
    for (const bad of ["60 3 * * *", "0 24 * * *", "0 3 0 * *", "0 3 * 13 *", "0 3 * * 7", "0 3 * * 8", "0 3 * * MON-FOO"]) assert.ok(!c.check(bad).ok, bad);
    assert.ok(s.cronWithSeconds("x").check("0 30 1 * * ?").ok);
    assert.ok(!s.cronWithSeconds("x").check("0 30 1 * * foo").ok);
});

test("volume sizes of 0 or 999999999999Ei are refused, saying the bounds", () => {
    assert.equal(`${s.STORAGE_BOUNDS.min}..${s.STORAGE_BOUNDS.max}`, "1Mi..64Ti");
    assert.match(problems({ postgresVolumeSize: "0" }), /ops:postgresVolumeSize: 0 is below the minimum 1Mi; expected a storage quantity from 1Mi to 64Ti such as "10Gi"/);
    assert.match(problems({ redisVolumeSize: "999999999999Ei" }), /ops:redisVolumeSize: 999999999999Ei is above the maximum 64Ti/);
});

test("a node port another component already uses is refused (30443 is the GitOps server's)", () => {
    const message = problems({ columnStoreHttpNodePort: 30443 });
    assert.match(message, /ops:gitopsServerNodePort: 30443 is also columnStoreHttpNodePort; expected a node port that no other component uses/);
    assert.match(problems({ columnStoreNativeNodePort: 31567 }), /ops:columnStoreNativeNodePort: 31567 is also columnStoreHttpNodePort/);
});

test("a type error does not hide the cross-key problems of other keys", () => {
    // gatewayToolAllowedHost not matching the base URL is a cross-key problem; the bad integer is a type error.
    const message = problems({ gatewayToolMaxRecharge: "lots", gatewayToolAllowedHost: "other.example.com" });
    assert.match(message, /ops:gatewayToolMaxRecharge: got "lots"/);
    assert.match(message, /ops:gatewayToolAllowedHost: "other\.example\.com" is not the host of gatewayToolBaseUrl/);
    // What a rule would say because of a failed key's stand-in default is not reported.
    const only = problems({ gatewayToolBaseUrl: "not a url" });
    assert.doesNotMatch(only, /gatewayToolAllowedHost/);
});
