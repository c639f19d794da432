import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { buildConstraint, createTemplateRegistry, evaluate, parseGatekeeperConfig } from "../engine";
import { celSourceError } from "./celJudge";
import { opaBinary } from "./opa";
import { opaVerdicts, wasmVerdict } from "./oracle";
import { deployments, oracleCases, pod } from "./testCases";
import { loadWasmTemplate, modulePaths, OPA_VERSION, wasmTemplateRule, type CompiledTemplateRule, type WasmTemplateRule } from "./rule";
import { manifestBinding } from "./template";

const DIR = path.join(__dirname, "testdata");
const file = (name: string) => path.join(DIR, `${name}.yaml`);
const unique = loadWasmTemplate(file("k8stestuniqueapplabel"));
const prefixes = loadWasmTemplate(file("k8stestallowedprefixes"));
const range = loadWasmTemplate(file("k8stestreplicarange"));
const conflict = loadWasmTemplate(file("k8stestconflict"));
const registry = createTemplateRegistry([unique, prefixes, range, conflict]);
/** The same templates on the Wasm path (the plan compiled to JavaScript is the default). */
const onWasm = (name: string) => loadWasmTemplate(file(name), file(name), { engine: "wasm" }) as WasmTemplateRule;
const wasm = { unique: onWasm("k8stestuniqueapplabel"), prefixes: onWasm("k8stestallowedprefixes"), range: onWasm("k8stestreplicarange"), conflict: onWasm("k8stestconflict") };

test("the pack runs the templates' plans compiled to JavaScript, the Wasm modules only where asked", () => {
    assert.deepEqual([unique, prefixes, range, conflict].map((r) => r.engine), ["plan", "plan", "plan", "plan"]);
    assert.deepEqual(Object.values(wasm).map((r) => r.engine), ["wasm", "wasm", "wasm", "wasm"]);
});

const syncDeployments = parseGatekeeperConfig({ spec: { sync: { syncOnly: [{ group: "apps", version: "v1", kind: "Deployment" }] } } });
const onlyDeployments = { kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] };

const messages = (rs: { constraintKind: string; object: { name?: string }; message: string }[]) => rs.map((r) => `${r.constraintKind} ${r.object.name}: ${r.message}`).sort();

test("a referential template reads data.inventory in Gatekeeper's layout, of the Config's syncOnly kinds only", () => {
    const c = buildConstraint({ kind: "K8sTestUniqueAppLabel", name: "unique", match: onlyDeployments }, registry);
    const rs = evaluate(deployments, [c], syncDeployments);
    assert.deepEqual(messages(rs), [
        'K8sTestUniqueAppLabel a: app label web of a is also used by {"b", "c"}',
        'K8sTestUniqueAppLabel b: app label web of b is also used by {"a", "c"}',
        'K8sTestUniqueAppLabel c: app label web of c is also used by {"a", "b"}',
    ]);
    assert.deepEqual(rs.find((r) => r.object.name === "a")?.details, { others: ["b", "c"] });
    // Without a Config that syncs Deployments, Gatekeeper's data.inventory is empty.
    assert.deepEqual(evaluate(deployments, [c]), []);
});

test("a template with libs (Rego v1) judges Pods and the Pods of workloads (the engine's expansion)", () => {
    const c = buildConstraint({ kind: "K8sTestAllowedPrefixes", name: "prefixes", parameters: { prefixes: ["registry.example/", "ghcr.io/"] } }, registry);
    const rs = evaluate([...deployments, pod("p", "docker.io/evil")], [c]);
    assert.deepEqual(messages(rs), [
        'K8sTestAllowedPrefixes a: [Implied by Deployment/a] container <c> has an image (nginx) outside ["registry.example/", "ghcr.io/"]',
        'K8sTestAllowedPrefixes p: container <main> has an image (docker.io/evil) outside ["registry.example/", "ghcr.io/"]',
    ]);
    // Without prefixes the `not` holds, but sprintf over the undefined list is undefined: no violation.
    const none = buildConstraint({ kind: "K8sTestAllowedPrefixes", name: "none" }, registry);
    assert.equal(evaluate([pod("q", "ghcr.io/ok")], [none]).length, 0);
});

test("a template's parameter schema is checked; messages print as Go's sprintf; results without msg are dropped", () => {
    assert.throws(
        () => buildConstraint({ kind: "K8sTestReplicaRange", name: "bad", parameters: { min: "two" } }, registry),
        /constraint K8sTestReplicaRange\/bad: parameters\.min must be (an )?integer/,
    );
    const c = buildConstraint({ kind: "K8sTestReplicaRange", name: "range", parameters: { min: 2, max: 3, ratio: 1.5 }, match: onlyDeployments }, registry);
    assert.deepEqual(messages(evaluate(deployments, [c])), [
        'K8sTestReplicaRange a: a has 1 replicas, fewer than 2 ({"max": 3, "min": 2, "ratio": 1.5})',
        "K8sTestReplicaRange a: ratio 1.5, 1.50, %!d(float64=1.5),   1.5|",
        "K8sTestReplicaRange b: b has 5 replicas, more than 3%!s(MISSING)",
        "K8sTestReplicaRange b: ratio 1.5, 1.50, %!d(float64=1.5),   1.5|",
        'K8sTestReplicaRange c: c has 0 replicas, fewer than 2 ({"max": 3, "min": 2, "ratio": 1.5})',
        "K8sTestReplicaRange c: ratio 1.5, 1.50, %!d(float64=1.5),   1.5|",
        'K8sTestReplicaRange d: d has 1 replicas, fewer than 2 ({"max": 3, "min": 2, "ratio": 1.5})',
        "K8sTestReplicaRange d: ratio 1.5, 1.50, %!d(float64=1.5),   1.5|",
    ]);
});

test("a template calling a built-in the host does not provide is refused when it loads, naming the built-in", () => {
    assert.throws(() => loadWasmTemplate(file("k8stestlookup")), /k8stestlookup\.yaml \(K8sTestLookup\): the policy calls built-in function net\.lookup_ip_addr, which the pack's Wasm host does not provide/);
});

test("an evaluation error is a violation carrying the error text (with the constraint's action), never a pass", () => {
    const c = buildConstraint({ kind: "K8sTestConflict", name: "conflict", match: { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] } }, registry);
    const rs = evaluate([pod("calm", "x"), pod("clash", "x", { conflict: "yes" }), deployments[1]], [c]);
    assert.deepEqual(messages(rs), [
        "K8sTestConflict b: [Implied by Deployment/b] template:4: eval_conflict_error: functions must not produce multiple outputs for same inputs",
        "K8sTestConflict clash: template:4: eval_conflict_error: functions must not produce multiple outputs for same inputs",
    ]);
    assert.ok(rs.every((r) => r.blocking && r.enforcementAction === "deny"));
});

test("a template with Rego and CEL is judged by its CEL, as Gatekeeper judges it (expected: gator v3.23.1 with its CEL driver on the same objects)", () => {
    const owner = loadWasmTemplate(file("k8stestrequiredowner"));
    const reg = createTemplateRegistry([owner]);
    const pods = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] };
    const noParams = buildConstraint({ kind: "K8sTestRequiredOwner", name: "noparams", match: pods }, reg);
    const withKey = buildConstraint({ kind: "K8sTestRequiredOwner", name: "withkey", match: pods, parameters: { key: "app" } }, reg);
    const p = (name: string, labels?: unknown) => ({ apiVersion: "v1", kind: "Pod", metadata: { name, namespace: "team", ...(labels !== undefined ? { labels } : {}) }, spec: { containers: [{ name: "a", image: "x" }] } });
    const rs = evaluate([p("nolabel"), p("nulllabels", null), p("labelled", { app: "web" })] as any, [noParams, withKey]);
    // The Rego would report nothing for the constraint without parameters and "nulllabels must have the label app".
    assert.deepEqual(rs.map((r) => `${r.constraintName} ${r.object.name}: ${r.message}`).sort(), [
        "noparams nolabel: expression 'variables.params.key in variables.labels' resulted in error: no such key: key",
        "noparams nulllabels: expression 'variables.params.key in variables.labels' resulted in error: no such key: key",
        "noparams labelled: expression 'variables.params.key in variables.labels' resulted in error: no such key: key",
        "withkey nolabel: nolabel must have the label app",
        "withkey nulllabels: expression 'variables.params.key in variables.labels' resulted in error: no such overload",
    ].sort());
});

test("a template whose CEL the offline evaluator cannot judge (a function it lacks) is named with the expression, not judged", () => {
    const owner = loadWasmTemplate(file("k8stestrequiredowner"));
    assert.equal(celSourceError(owner.parsed.cel!), undefined);
    const withIp = { ...owner.parsed.cel!, validations: [{ expression: "ip(variables.anyObject.metadata.name).family() == 4", message: "not an IPv4 name" }] };
    assert.match(celSourceError(withIp) ?? "", /^its CEL validations\[0\]\.expression cannot be judged by the pack's offline CEL evaluator \(found no matching overload for 'ip\(dyn\)'\)/);
});

test("every evaluation starts from the heap as it was after loading data: data.inventory stays, memory does not grow, an error leaves no trace", () => {
    const [[, input, data]] = oracleCases(wasm);
    const policy = wasm.unique.policy;
    policy.setData(data);
    const first = policy.evaluate(input);
    assert.equal((first[0].result as unknown[]).length, 1, "deployment a shares its app label");
    const bytes = policy.memoryBytes;
    for (let i = 0; i < 3000; i++) assert.deepEqual(policy.evaluate(input), first);
    assert.equal(policy.memoryBytes, bytes);

    const review = (p: ReturnType<typeof pod>) => ({ review: { object: p, kind: { group: "", version: "v1", kind: "Pod" }, operation: "CREATE", name: p.metadata?.name, namespace: "team" }, parameters: {} });
    const calm = review(pod("calm", "x"));
    const before = wasm.conflict.policy.evaluate(calm);
    assert.throws(() => wasm.conflict.policy.evaluate(review(pod("clash", "x", { conflict: "yes" }))), /var assignment conflict/);
    assert.deepEqual(wasm.conflict.policy.evaluate(calm), before);
});

test("a missing or stale module is an error naming the template and the command", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "wasm-template-"));
    try {
        const copy = path.join(dir, "k8stestreplicarange.yaml");
        copyFileSync(file("k8stestreplicarange"), copy);
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange.yaml"), /policies\/templates\/k8stestreplicarange\.yaml: template K8sTestReplicaRange has no compiled module \(policies\/templates\/wasm\/k8stestreplicarange\.wasm\); run npm run gatekeeper:wasm/);
        const from = modulePaths(file("k8stestreplicarange"));
        const to = modulePaths(copy);
        mkdirSync(path.dirname(to.wasm));
        copyFileSync(from.wasm, to.wasm);
        copyFileSync(from.manifest, to.manifest);
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange.yaml"), /K8sTestReplicaRange .* is stale: .*run npm run gatekeeper:wasm/, "without its compiled plan");
        copyFileSync(from.js, to.js);
        assert.equal(loadWasmTemplate(copy).kind, "K8sTestReplicaRange");
        const js = readFileSync(to.js, "utf8");
        writeFileSync(to.js, js.replace("fewer than", "less than"));
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange.yaml"), /K8sTestReplicaRange .* is stale: .*run npm run gatekeeper:wasm/, "a compiled plan changed by hand");
        // Of another format (another compiler's calls), with a manifest that matches it: stale, saying why.
        const otherFormat = js.replace(/^\/\/ plan-js \d+:/, "// plan-js 0:");
        writeFileSync(to.js, otherFormat);
        const manifest = JSON.parse(readFileSync(from.manifest, "utf8"));
        const rebound = { ...manifest, planJs: `sha256:${createHash("sha256").update(otherFormat).digest("hex")}` };
        writeFileSync(to.manifest, JSON.stringify({ ...rebound, binding: manifestBinding(rebound) }));
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange-other.yaml"), /K8sTestReplicaRange .* is stale: .*run npm run gatekeeper:wasm \(the compiled plan is not of the current format/);
        copyFileSync(from.manifest, to.manifest);
        copyFileSync(from.js, to.js);
        copyFileSync(from.plan, to.plan);
        writeFileSync(copy, readFileSync(copy, "utf8").replace("fewer than", "less than"));
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange.yaml"), /K8sTestReplicaRange .* is stale: .*run npm run gatekeeper:wasm/);
        // A change its Rego does not see (a comment): the file is no longer the one the manifest copied, so its YAML is read.
        writeFileSync(copy, `# reviewed\n${readFileSync(file("k8stestreplicarange"), "utf8").replace("fewer than", "less than")}`);
        assert.throws(() => loadWasmTemplate(copy, "policies/templates/k8stestreplicarange-comment.yaml"), /K8sTestReplicaRange .* is stale/, "read from the file, not from the manifest's copy");
        writeFileSync(copy, `# reviewed\n${readFileSync(file("k8stestreplicarange"), "utf8")}`);
        assert.equal(loadWasmTemplate(copy, "policies/templates/k8stestreplicarange-comment.yaml").kind, "K8sTestReplicaRange");
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

const opa = opaBinary();
for (const [engine, rules] of [["plan", { unique, range, prefixes, conflict }], ["wasm", wasm]] as const)
test(`the ${engine === "plan" ? "plan compiled to JavaScript" : "Wasm host"} judges as opa eval on the same Rego (hook, libs, data.inventory, built-ins, errors)`, { skip: existsSync(opa) ? false : `opa is not at ${opa} (npm run gatekeeper:build -- opa)` }, () => {
    const groups = new Map<string, { rule: CompiledTemplateRule; data: unknown; inputs: unknown[] }>();
    for (const [rule, input, data] of oracleCases(rules)) {
        const key = `${rule.kind}\u0000${JSON.stringify(data)}`;
        if (!groups.has(key)) groups.set(key, { rule, data, inputs: [] });
        groups.get(key)!.inputs.push(input);
    }
    let n = 0;
    let errors = 0;
    for (const { rule, data, inputs } of groups.values()) {
        const expected = opaVerdicts(opa, rule, inputs, data as Record<string, unknown>);
        inputs.forEach((input, i) => {
            if ("error" in expected[i]) errors++;
            assert.deepEqual(wasmVerdict(rule, input, data), expected[i], `${rule.kind} on ${JSON.stringify(input).slice(0, 300)}`);
            n++;
        });
    }
    assert.equal(n, 36);
    assert.equal(errors, 1, "the conflict template's one clashing input");
});

test("every committed module is up to date with its template (npm run gatekeeper:wasm -- --check)", () => {
    const r = spawnSync(process.execPath, ["--import", "tsx", path.join(__dirname, "..", "..", "..", "tools", "gatekeeper", "wasm.ts"), "--check"], { encoding: "utf8" });
    assert.equal(r.status, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /policies\/gatekeeper\/wasm\/testdata\/k8stestconflict\.yaml: up to date/);
});

test("the opa version the modules are compiled with is the one tools/gatekeeper/build.sh builds", () => {
    const build = readFileSync(path.join(__dirname, "..", "..", "..", "tools", "gatekeeper", "build.sh"), "utf8");
    assert.equal(/^OPA_VERSION=(\S+)/m.exec(build)?.[1], OPA_VERSION);
    assert.equal(opaBinary().endsWith(`opa-${OPA_VERSION}/opa`), true);
});

test("a violation whose msg is not a string is an error result of the template, as the constraint framework fails such a review", () => {
    const stub = { setData() {}, evaluateJSON: () => [{ result: [{ msg: 42, details: {} }] }] } as unknown as WasmTemplateRule["policy"];
    const rule = wasmTemplateRule(range.parsed, stub);
    const c = buildConstraint({ kind: "K8sTestReplicaRange", name: "n" }, createTemplateRegistry([rule]));
    const [r] = evaluate([deployments[0]], [c]);
    assert.equal(r.error, true);
    assert.equal(r.blocking, true);
    assert.match(r.message, /^template k8stestreplicarange failed: extracting message binding: msg is 42, not a string$/);
});
