import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as YAML from "yaml";
import { flatten, schema } from "../config/schemaIndex";
import { projectFile } from "../tools/projectFile";

// The pulumi CLI refuses a stack that lacks a value for a project key declared without a default
// ("Stack 'ci' is missing configuration values ...", pkg/workspace/config.go at v3.259.0), and
// leaves undeclared keys alone: an optional key must not be declared without a default.
test("Pulumi.yaml declares without a default only the keys every stack must set", () => {
    const declared = YAML.parse(projectFile()).config as Record<string, { default?: unknown }>;
    const fields = new Map(flatten(schema).map(({ key, field }) => [key, field]));
    const withoutDefault = Object.entries(declared).filter(([, d]) => d.default === undefined).map(([k]) => k);
    assert.ok(withoutDefault.length > 0);
    for (const key of withoutDefault) assert.equal(fields.get(key)?.optional ?? false, false, `${key} is optional but declared without a default`);
    for (const [key, field] of fields) {
        if (field.optional && field.default === undefined) assert.ok(!(key in declared), `${key} is declared`);
        else assert.ok(key in declared, `${key} is not declared`);
    }
});
