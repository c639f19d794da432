/** Hostile key names in a stack's configuration get a clear message (issue 22), never a raw regex error. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import * as s from "../config/schema";

const VALID: Record<string, unknown> = Object.fromEntries(
    s.flatten(schema).filter(({ field }) => field.secret).map(({ key, field }) => [key, (field as { placeholder?: unknown }).placeholder]),
);

for (const key of ["agentServerImage[0]", "agentServer[Image", "agentServer(Image", "a*b", "bridge\\", "x+?{"]) {
    test(`a key "${key}" is reported as not a key of this project, with the other problems`, () => {
        let err: unknown;
        try {
            // A cross-key problem too (the allowed host is not the base URL's host): the cross-key check runs.
            loadConfig(mapSource("ops", "test", { ...VALID, [key]: "x", gatewayToolAdminApiKey: `admin-${"ab12".repeat(16)}`, gatewayToolBaseUrl: "http://gw.internal:8080", gatewayToolAllowedHost: "evil.example.com" }));
        } catch (e) {
            err = e;
        }
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
        assert.ok(err.message.includes(`${key}: is not a key of this project`), err.message);
        assert.match(err.message, /gatewayToolAllowedHost: "evil.example.com" is not the host of gatewayToolBaseUrl/);
    });
}
