import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { after, test } from "node:test";
import { listStacks } from "../../config/stacks";
import { PackConfigError, validatePackConfig } from "./config";
import { packPolicies } from "./policies";
import { verdictOf } from "./render";
import { loadPackConfig, runPack } from "./run";
import { resourceOf } from "./resources";

const FILE = "policies/config/test.json";
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "pack-config-"));
after(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** A valid config: prod's, with its constraint file. */
const valid = () => structuredClone(loadPackConfig("prod")) as Record<string, any>;

const problemsOf = (config: unknown): string => {
    try {
        validatePackConfig(config, FILE, packPolicies);
    } catch (err) {
        assert.ok(err instanceof PackConfigError, String(err));
        return err.message;
    }
    return "";
};

test("every stack has a policy pack config that the pack accepts, the ci stack included", () => {
    const stacks = listStacks();
    assert.ok(stacks.includes("ci") && stacks.includes("dev") && stacks.includes("prod"), stacks.join(", "));
    for (const stack of stacks) assert.doesNotThrow(() => loadPackConfig(stack), stack);
});

test("the prod config is valid as it stands (the cases below each break one thing)", () => {
    assert.equal(problemsOf(valid()), "");
});

test("a config naming an unknown policy is an error naming the file and the policy", () => {
    assert.match(problemsOf({ ...valid(), "images-pinned-by-digests": { tier: "prod" } }), /^policies\/config\/test.json: unknown policy "images-pinned-by-digests" \(the pack's policies: gatekeeper-deny, /);
});

test("a bad value is an error naming the file, the policy and the setting", () => {
    const c = valid();
    c["images-pinned-by-digest"].tier = "Prod";
    assert.equal(problemsOf(c), `${FILE}: images-pinned-by-digest.tier must be one of "dev", "prod", got "Prod"`);
    const d = valid();
    d["gateway-max-recharge"].max = 0;
    assert.equal(problemsOf(d), `${FILE}: gateway-max-recharge.max must be at least 1, got 0`);
    const e = valid();
    e["node-port-allowlist"].allowedNodePorts = [30443, "30900"];
    assert.match(problemsOf(e), /node-port-allowlist.allowedNodePorts\[1\] must be an integer, got string "30900"/);
});

test("an unknown setting, a bad enforcement level and a value of the wrong shape are errors", () => {
    assert.match(problemsOf({ ...valid(), "gateway-max-recharge": { maximum: 5 } }), /gateway-max-recharge.maximum is not a setting of this policy \(known: max\)/);
    assert.match(problemsOf({ ...valid(), "no-plaintext-secrets": "Mandatory" }), /no-plaintext-secrets must be one of advisory, mandatory, remediate, disabled, got "Mandatory"/);
    assert.match(problemsOf({ ...valid(), "no-plaintext-secrets": { enforcementLevel: "block" } }), /no-plaintext-secrets.enforcementLevel must be one of/);
    assert.match(problemsOf({ ...valid(), "no-plaintext-secrets": 3 }), /no-plaintext-secrets must be an enforcement level or an object of settings, got number 3/);
    assert.match(problemsOf([]), /test.json: expected an object of policy name -> settings, got a list/);
});

test("a Gatekeeper policy without its constraint file, or naming a missing one, is an error", () => {
    const c = valid();
    delete c["gatekeeper-warn"];
    assert.match(problemsOf(c), /gatekeeper-warn: no entry; the policy needs its constraint file/);
    const d = valid();
    d["gatekeeper-deny"] = {};
    assert.match(problemsOf(d), /gatekeeper-deny.constraints is required/);
    const e = valid();
    e["gatekeeper-deny"].constraints = "constraints/nowhere.yaml";
    assert.match(problemsOf(e), /gatekeeper-deny.constraints: no such file .*constraints\/nowhere.yaml/);
    // Disabled: no file needed.
    const f = valid();
    f["gatekeeper-dryrun"] = "disabled";
    assert.equal(problemsOf(f), "");
});

const constraintFile = (name: string, text: string) => {
    const file = path.join(tmp, name);
    fs.writeFileSync(file, text);
    return file;
};

test("a constraint file that does not parse, or whose parameters break the template's schema, is an error naming both files and the constraint", () => {
    const c = valid();
    c["gatekeeper-deny"].constraints = constraintFile("broken.yaml", "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRequiredLabels\nmetadata: {name: x\n");
    assert.match(problemsOf(c), /^policies\/config\/test.json: gatekeeper-deny.constraints: .*broken.yaml: document 1: /);
    const d = valid();
    d["gatekeeper-deny"].constraints = constraintFile(
        "schema.yaml",
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sPSPFSGroup\nmetadata: {name: fs}\nspec:\n  parameters:\n    rule: Sometimes\n",
    );
    assert.match(problemsOf(d), /gatekeeper-deny.constraints: .*schema.yaml: constraint K8sPSPFSGroup\/fs: parameters.rule must be one of "MayRunAs", "MustRunAs", "RunAsAny", got "Sometimes"/);
});

test("the verdict is not ok for a mandatory violation or a pack that cannot be evaluated, and ok otherwise", () => {
    const pod = resourceOf({ apiVersion: "v1", kind: "Pod", metadata: { name: "p", namespace: "default" }, spec: { containers: [{ name: "c", image: "nginx", securityContext: { privileged: true } }] } });
    const config = valid();
    const bad = verdictOf(() => runPack([pod], config));
    assert.equal(bad.ok, false);
    assert.match(bad.text, /mandatory violation\(s\) block the stack/);
    assert.match(bad.text, /\[mandatory\] gatekeeper-deny: K8sPSPPrivilegedContainer\//);
    const broken = verdictOf(() => {
        throw new PackConfigError(`${FILE}: images-pinned-by-digest.tier must be one of "dev", "prod", got "Prod"`);
    });
    assert.deepEqual(broken, { ok: false, text: `policy pack: error: ${FILE}: images-pinned-by-digest.tier must be one of "dev", "prod", got "Prod"` });
    const off = structuredClone(config);
    for (const p of packPolicies) off[p.name] = typeof off[p.name] === "object" ? { ...off[p.name], enforcementLevel: "advisory" } : "advisory";
    assert.equal(verdictOf(() => runPack([pod], off)).ok, true);
});

test("a constraint the admission policies could not carry (lookahead regex, bad name) is refused with both files, the constraint and the reason (issue 22)", () => {
    const c = valid();
    c["gatekeeper-deny"].constraints = constraintFile(
        "unenforceable.yaml",
        "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sRequiredLabels\nmetadata: {name: Owner_Label}\nspec:\n  parameters:\n    labels: [{key: owner, allowedRegex: '^(?=t)'}]\n",
    );
    const problems = problemsOf(c);
    assert.match(problems, /^policies\/config\/test.json: gatekeeper-deny.constraints: .*unenforceable.yaml: constraint K8sRequiredLabels\/Owner_Label: metadata.name "Owner_Label" is not a DNS subdomain name/m);
    assert.match(problems, /unenforceable.yaml: constraint K8sRequiredLabels\/Owner_Label: spec.parameters.labels\[0\].allowedRegex: invalid regular expression/);
});

test("issue 42: a key given twice in the pack config file is an error naming the line and the key (JSON.parse would keep the last)", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "dup-"));
    const text = fs.readFileSync(path.resolve(__dirname, "..", "config", "prod.json"), "utf8").replace(/^\{/, '{\n    "images-pinned-by-digest": "disabled",');
    fs.mkdirSync(path.join(dir, "config"));
    fs.writeFileSync(path.join(dir, "config", "dup.json"), text);
    const parsed = JSON.parse(text);
    assert.equal(parsed["images-pinned-by-digest"].tier, "prod", "JSON.parse keeps the last one: the check would have run, the reviewer reads 'disabled'");
    const { readPackConfigFile } = require("./config") as typeof import("./config");
    assert.throws(() => readPackConfigFile(path.join(dir, "config", "dup.json"), "policies/config/dup.json", packPolicies), (err: Error) => err instanceof PackConfigError && /^policies\/config\/dup\.json: line \d+: the key "images-pinned-by-digest" is given twice in one object/.test(err.message));
});

test("issue 42: a Gatekeeper Config that excludes every namespace ('*') from the webhook or audit is refused: preview and the admission policies would disagree", () => {
    const prodConstraints = fs.readFileSync(path.resolve(__dirname, "..", "constraints", "prod.yaml"), "utf8");
    for (const glob of ["*", "**"]) {
        const file = path.join(tmp, `all-excluded-${glob.length}.yaml`);
        fs.writeFileSync(file, prodConstraints.replace(/excludedNamespaces:\n(\s+)- kube-system/, `excludedNamespaces:\n$1- "${glob}"\n$1- kube-system`));
        const config = valid();
        for (const action of ["deny", "warn", "dryrun"]) config[`gatekeeper-${action}`] = { ...config[`gatekeeper-${action}`], constraints: file };
        const said = problemsOf(config);
        if (glob === "*") assert.match(said, /gatekeeper-deny\.constraints: the Config's spec\.match\[0\]\.excludedNamespaces has "\*", which excludes every namespace from \*: every namespaced constraint would be off at preview/);
        else assert.notEqual(said, "", "'**' is refused (not a namespace glob, or every namespace)");
    }
});
