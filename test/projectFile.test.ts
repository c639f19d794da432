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

// The Kubernetes provider reads `kubernetes:config:kubeClientSettings` as JSON into
// KubeClientSettings {burst int, qps float64, timeout int} (provider 4.25.0
// pkg/provider/provider.go:795-800, types.go:35-42); the CLI refuses a type or a default on a key
// of another namespace and needs a value (sdk/go/common/workspace/project.go:866-884).
test("Pulumi.yaml gives the Kubernetes provider's client limits as a value the provider reads", () => {
    const entry = YAML.parse(projectFile()).config["kubernetes:kubeClientSettings"];
    assert.deepEqual(Object.keys(entry), ["value"]);
    const value = entry.value as Record<string, unknown>;
    for (const key of Object.keys(value)) assert.ok(["burst", "qps", "timeout"].includes(key), `${key} is not a field of KubeClientSettings`);
    assert.ok(Number.isInteger(value.burst) && (value.burst as number) > 120, `burst ${value.burst}: a whole number above the provider's default 120`);
    assert.ok(typeof value.qps === "number" && value.qps > 50, `qps ${value.qps}: above the provider's default 50`);
});
