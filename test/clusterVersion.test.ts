/**
 * One minimum cluster release (environmentKubernetesMinVersion): the config checks it, the strict
 * API check (npm run check:k8s) fails on fields newer than it and validates against the 1.35 schemas,
 * and the deprecated-API constraints of every stack name the same release.
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { test } from "node:test";
import * as YAML from "yaml";
import { ConfigError, loadConfig, mapSource, schema } from "../config";
import { OLDEST_SUPPORTED, SCHEMA_VERSION, compareVersions } from "../config/kubernetesVersion";
import * as s from "../config/schema";
import { offlineStackConfig } from "../tools/genGitops";
import { listStacks, REPO_ROOT } from "../cli/harness/stackConfig";
import { judgeStrictOutput, STRICT_CHECK_SCRIPT, strictCheckArgs } from "../tools/k8sStrictCheck";

const SECRETS = Object.fromEntries(s.flatten(schema).filter(({ field }) => field.secret && !field.optional).map(({ key, field }) => [key, field.placeholder]));
SECRETS.gatewayToolAdminApiKey = `admin-${"ab12".repeat(16)}`;

function configProblem(version: string): string | undefined {
    try {
        loadConfig(mapSource("ops", "test", { ...SECRETS, environmentKubernetesMinVersion: version }));
        return undefined;
    } catch (err) {
        assert.ok(err instanceof ConfigError, String(err));
        return err.message;
    }
}

test("the minimum release defaults to 1.30 (lifecycle.preStop.sleep is on by default from 1.30) and stays within the checked schemas", () => {
    assert.equal(loadConfig(mapSource("ops", "test", SECRETS)).environment.kubernetesMinVersion, "1.30");
    assert.equal(configProblem("1.30"), undefined);
    assert.equal(configProblem("1.35"), undefined);
    assert.match(configProblem("1.29") ?? "", /environmentKubernetesMinVersion.*1\.29 is outside 1\.30\.\.1\.35/s);
    assert.match(configProblem("1.36") ?? "", /environmentKubernetesMinVersion/);
    assert.match(configProblem("v1.30") ?? "", /environmentKubernetesMinVersion.*"1\.<minor>"/s);
    assert.equal(compareVersions("1.9", "1.30"), -1, "releases compare by minor number, not as decimals");
});

test("the strict check validates against the 1.35 schemas and the deployed CRDs", () => {
    const args = strictCheckArgs(["x.yaml"]);
    assert.deepEqual(args.slice(1), ["--k8s", "1.35", "--crds", "deployed", "x.yaml"]);
    assert.equal(SCHEMA_VERSION, "1.35");
    assert.ok(compareVersions(OLDEST_SUPPORTED, SCHEMA_VERSION) <= 0);
});

test("a field newer than the minimum release is a problem, an older one only a warning", () => {
    const out = [
        "warning: Deployment/a/b: .spec.template.spec.containers[0].lifecycle.preStop.sleep: newer field: in the Kubernetes API since 1.29, absent in 1.27 (the project's kubernetes-models baseline); an older API server rejects it under strict validation",
        "warning: Pod/a/c: .spec.x: newer field: in the Kubernetes API since 1.33, absent in 1.27",
        "k8s-strict: schemas Kubernetes 1.35 + CRDs (deployed); 2 warnings",
        "k8s-strict: 2 objects, 0 problems",
    ].join("\n");
    assert.deepEqual(judgeStrictOutput(out, "1.30").problems.length, 1);
    assert.match(judgeStrictOutput(out, "1.30").problems[0], /since 1\.33.*needs Kubernetes 1\.33, the stack's minimum is 1\.30/);
    assert.deepEqual(judgeStrictOutput(out, "1.33").problems, []);
    assert.equal(judgeStrictOutput(out, "1.33").objects, 2);
    const bad = "Deployment/a/b: .spec.foo: unknown field\nk8s-strict: 1 objects, 1 problems";
    assert.deepEqual(judgeStrictOutput(bad, "1.30").problems, ["Deployment/a/b: .spec.foo: unknown field"]);
    assert.match(judgeStrictOutput("", "1.30").problems[0], /no summary line/);
});

test("every stack's deprecated-API constraint names the stack's minimum release", () => {
    const withPack = listStacks().filter((stack) => fs.existsSync(path.join(REPO_ROOT, "policies", "config", `${stack}.json`)));
    assert.ok(withPack.includes("dev") && withPack.includes("prod"), `stacks with a policy pack config: ${withPack.join(", ")}`);
    for (const stack of withPack) {
        const packConfig = JSON.parse(fs.readFileSync(path.join(REPO_ROOT, "policies", "config", `${stack}.json`), "utf8"));
        const file = path.join(REPO_ROOT, "policies", packConfig["gatekeeper-deny"].constraints);
        const docs = YAML.parseAllDocuments(fs.readFileSync(file, "utf8"));
        const removed = docs.filter((d) => d.get("kind") === "VerifyDeprecatedAPI");
        assert.ok(removed.length > 0, `${file} has a VerifyDeprecatedAPI constraint`);
        for (const d of removed) {
            // The template's parameter is a number; "1.30" must be compared as written, not as 1.3.
            const node = d.getIn(["spec", "parameters", "k8sVersion"], true) as YAML.Scalar;
            assert.equal(node.source ?? String(node.value), offlineStackConfig(stack).environment.kubernetesMinVersion, `${stack}: ${file} k8sVersion`);
        }
    }
});

test("the strict check script is there (../shared)", (t) => {
    if (!fs.existsSync(STRICT_CHECK_SCRIPT)) {
        if (process.env.CI === "true") assert.fail(`${STRICT_CHECK_SCRIPT} is missing under CI`);
        t.skip(`${STRICT_CHECK_SCRIPT} is absent: clone the repository next to shared/`);
        return;
    }
    assert.match(fs.readFileSync(STRICT_CHECK_SCRIPT, "utf8"), /--crds/);
});
