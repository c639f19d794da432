/** A configuration with every required secret set (placeholders), and the problems loadConfig finds in it with some values changed. */
import assert from "node:assert/strict";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import { flatten } from "../config/schema";

export const VALID: Record<string, unknown> = {
    ...Object.fromEntries(flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder])),
    gatewayToolAdminApiKey: `admin-${"ab12".repeat(16)}`,
};

/** The ConfigError's message, or "" when the values are accepted. */
export function configProblems(values: Record<string, unknown>, stack = "test"): string {
    try {
        loadConfig(mapSource("ops", stack, { ...VALID, ...values }));
        return "";
    } catch (err) {
        assert.ok(err instanceof ConfigError, `expected a ConfigError, got ${err}`);
        return err.message;
    }
}
