/**
 * The offline diff (npm run diff): the object and field diff on two renders, the Markdown and
 * JSON reports, the policy section. End to end with a real `git worktree` between two commits of a
 * temporary clone of this repository: diffClone.integration.ts (npm run test:integration).
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import type { K8sObject } from "../policies/gatekeeper/types";
import { formatOutcome, parseArgs } from "../cli/diff";
import { renderJson } from "../cli/diff/json";
import { renderMarkdown } from "../cli/diff/markdown";
import { diffObjects } from "../cli/diff/objects";
import type { PolicyFinding } from "../cli/diff/policy";
import { buildReport, StackDiffReport } from "../cli/diff/report";
import { unifiedLineDiff } from "../cli/diff/textDiff";

const deployment = (cpu: string, extraEnv: Array<Record<string, unknown>> = []): K8sObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "model-bridge", namespace: "agents", annotations: { "configmap.stakater.com/reload": "model-bridge-settings" } },
    spec: {
        replicas: 2,
        template: {
            spec: {
                containers: [
                    { name: "sidecar", image: "registry.example.com/sidecar:1" },
                    { name: "bridge", image: "registry.example.com/bridge:1", env: [{ name: "PORT", value: "8080" }, ...extraEnv], resources: { limits: { cpu } } },
                ],
            },
        },
    },
});

const configMap = (name: string, conf: string): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "agents" }, data: { "app.conf": conf } });
const secret = (token: string, label: string): K8sObject => ({ apiVersion: "v1", kind: "Secret", metadata: { name: "upstream", namespace: "agents", labels: { rev: label } }, stringData: { token } });

const BASE_SECRET = "base-secret-value-0001";
const HEAD_SECRET = "head-secret-value-0002";

const baseObjects = [deployment("250m"), configMap("settings", "a\nb\nc\n"), configMap("old-only", "x"), secret(BASE_SECRET, "base")];
const headObjects = [deployment("300m", [{ name: "MODE", value: "fast" }]), configMap("settings", "a\nB\nc\n"), configMap("new-only", "y"), secret(HEAD_SECRET, "head")];

describe("diffObjects", () => {
    const d = diffObjects(baseObjects, headObjects);

    it("finds the added, the removed and the changed objects by kind, namespace and name", () => {
        assert.deepEqual(d.added.map((r) => `${r.kind} ${r.namespace}/${r.name}`), ["ConfigMap agents/new-only"]);
        assert.deepEqual(d.removed.map((r) => `${r.kind} ${r.namespace}/${r.name}`), ["ConfigMap agents/old-only"]);
        assert.deepEqual(d.changed.map((r) => `${r.kind} ${r.namespace}/${r.name}`), ["ConfigMap agents/settings", "Deployment agents/model-bridge", "Secret agents/upstream"]);
        assert.equal(d.unchangedCount, 0);
    });

    it("names containers and env entries by name, not position, with old and new values", () => {
        const changes = d.changed.find((c) => c.kind === "Deployment")!.changes;
        assert.deepEqual(changes, [
            { path: "spec.template.spec.containers[name=bridge].env[name=MODE]", type: "value", new: { name: "MODE", value: "fast" } },
            { path: "spec.template.spec.containers[name=bridge].resources.limits.cpu", type: "value", old: "250m", new: "300m" },
        ]);
    });

    it("shows a multi-line string as a unified line diff", () => {
        const changes = d.changed.find((c) => c.name === "settings")!.changes;
        assert.deepEqual(changes, [{ path: 'data["app.conf"]', type: "text", lines: ["@@ -1,3 +1,3 @@", " a", "-b", "+B", " c"] }]);
    });

    it("never shows a Secret's values, on either side, even when given unredacted objects", () => {
        const s = d.changed.find((c) => c.kind === "Secret")!;
        assert.deepEqual(s.changes.map((c) => c.path), ["metadata.labels.rev"]);
        const text = JSON.stringify(d);
        assert.ok(!text.includes(BASE_SECRET) && !text.includes(HEAD_SECRET), "a secret value leaked into the diff");
        const added = diffObjects([], [secret(HEAD_SECRET, "x")]);
        assert.equal(added.added.length, 1);
        const changedData = diffObjects([{ ...secret(BASE_SECRET, "x"), data: { b: "YWJj" } }], [{ ...secret(HEAD_SECRET, "x"), data: { b: "ZGVm" } }]);
        assert.equal(changedData.changed.length, 0, "Secret data values are redacted before comparing, so they cannot show");
    });

    it("quotes keys that are not identifiers and treats scalar arrays as one value", () => {
        const a: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s", annotations: { "a.b/c": "1" } }, spec: { args: ["x", "y"] } };
        const b: K8sObject = { apiVersion: "v1", kind: "Service", metadata: { name: "s", annotations: { "a.b/c": "2" } }, spec: { args: ["x", "z"] } };
        assert.deepEqual(diffObjects([a], [b]).changed[0].changes, [
            { path: 'metadata.annotations["a.b/c"]', type: "value", old: "1", new: "2" },
            { path: "spec.args", type: "value", old: ["x", "y"], new: ["x", "z"] },
        ]);
    });

    it("keeps an object across an API version change of the same group", () => {
        const hpa = (v: string): K8sObject => ({ apiVersion: `autoscaling/${v}`, kind: "HorizontalPodAutoscaler", metadata: { name: "h", namespace: "n" }, spec: {} });
        const d2 = diffObjects([hpa("v2beta2")], [hpa("v2")]);
        assert.equal(d2.added.length + d2.removed.length, 0);
        assert.deepEqual(d2.changed[0].changes, [{ path: "apiVersion", type: "value", old: "autoscaling/v2beta2", new: "autoscaling/v2" }]);
    });
});

describe("unifiedLineDiff", () => {
    it("makes separate hunks for distant changes with three lines of context", () => {
        const before = Array.from({ length: 20 }, (_, i) => `l${i + 1}`).join("\n");
        const after = before.replace("l2\n", "L2\n").replace("l18\n", "");
        assert.deepEqual(unifiedLineDiff(before, after), [
            "@@ -1,5 +1,5 @@", " l1", "-l2", "+L2", " l3", " l4", " l5",
            "@@ -15,6 +15,5 @@", " l15", " l16", " l17", "-l18", " l19", " l20",
        ]);
        assert.deepEqual(unifiedLineDiff("same\n", "same\n"), []);
    });
});

const finding = (message: string, object = "Deployment agents/model-bridge"): PolicyFinding => ({ policy: "gatekeeper-deny", enforcementLevel: "mandatory", object, message });

async function report(policy: { base: PolicyFinding[]; head: PolicyFinding[] } | undefined): Promise<StackDiffReport> {
    const evaluators = policy ? { base: () => policy.base, head: () => policy.head } : {};
    return buildReport("prod", { info: { ref: "main", commit: "0123456789abcdef0123456789abcdef01234567", problems: [] }, objects: baseObjects, resources: [] }, { info: { ref: "working tree", problems: [] }, objects: headObjects, resources: [] }, evaluators);
}

describe("Markdown report", () => {
    it("lists each object change and its fields, with old -> new values and a diff block", async () => {
        const md = renderMarkdown(await report(undefined));
        assert.match(md, /^### Stack `prod`: 1 added, 1 removed, 3 changed/);
        assert.match(md, /\| added \| ConfigMap \| agents \| new-only \|/);
        assert.match(md, /\| removed \| ConfigMap \| agents \| old-only \|/);
        assert.match(md, /\| changed \| Deployment \| agents \| model-bridge \|/);
        assert.ok(md.includes('spec.template.spec.containers[name=bridge].resources.limits.cpu: "250m" -> "300m"'));
        assert.ok(md.includes('spec.template.spec.containers[name=bridge].env[name=MODE]: (absent) -> {"name":"MODE","value":"fast"}'));
        assert.ok(md.includes('```diff\n# data["app.conf"]\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n```'));
        assert.ok(!md.includes(BASE_SECRET) && !md.includes(HEAD_SECRET));
        assert.match(md, /Base `main` \(`0123456789ab`\)/);
    });

    it("says the policy results were not evaluated when no revision provides the evaluation", async () => {
        const md = renderMarkdown(await report(undefined));
        assert.match(md, /#### Policy results\n\nNot evaluated: /);
    });

    it("reports a policy pack that cannot be evaluated as an error, not as not evaluated", async () => {
        const failing = () => {
            throw new Error('policies/config/prod.json: images-pinned-by-digest.tier must be one of "dev", "prod", got "Prod"');
        };
        for (const evaluators of [{ head: failing }, { base: () => [], head: failing }, { base: failing, head: () => [] }]) {
            const r = await buildReport("prod", { info: { ref: "main", commit: "0123456789abcdef0123456789abcdef01234567", problems: [] }, objects: baseObjects, resources: [] }, { info: { ref: "working tree", problems: [] }, objects: headObjects, resources: [] }, evaluators);
            assert.equal(r.policy.available, false);
            assert.equal(!r.policy.available && r.policy.error, true);
            const md = renderMarkdown(r);
            assert.match(md, /#### Policy results\n\n\*\*Error\*\*: the policy pack failed on the (working tree|base revision): policies\/config\/prod.json: images-pinned-by-digest.tier must be one of/);
            assert.doesNotMatch(md, /Not evaluated/);
        }
    });

    it("shows the policy results that appeared and disappeared when they differ", async () => {
        const r = await report({ base: [finding("old problem"), finding("stays")], head: [finding("stays"), finding("new <problem>", "Service agents/x")] });
        assert.equal(r.policy.available, true);
        const md = renderMarkdown(r);
        assert.ok(md.includes("Appeared (1):\n\n- **mandatory** `gatekeeper-deny` on Service agents/x: new &lt;problem&gt;"), md);
        assert.ok(md.includes("Disappeared (1):\n\n- **mandatory** `gatekeeper-deny` on Deployment agents/model-bridge: old problem"));
        const same = renderMarkdown(await report({ base: [finding("stays")], head: [finding("stays")] }));
        assert.match(same, /No policy result appeared or disappeared \(1 result unchanged\)/);
    });

    it("fits a comment: field diffs beyond the budget are left out with a pointer to the full report", async () => {
        const many = Array.from({ length: 300 }, (_, i) => configMap(`cm-${i}`, `${"x".repeat(200)}\n${i}\n`));
        const changed = many.map((o) => ({ ...o, data: { "app.conf": `${"y".repeat(200)}\n${o.metadata!.name}\n` } }));
        const r = await buildReport("dev", { info: { ref: "main", problems: [] }, objects: many, resources: [] }, { info: { ref: "working tree", problems: [] }, objects: changed, resources: [] }, {});
        const md = renderMarkdown(r, { maxChars: 20000 });
        assert.ok(md.length <= 20000, `${md.length} characters`);
        assert.match(md, /field diffs? left out to fit a comment: run `npm run diff -- --stack dev --base main --format json`/);
        assert.match(md, /\| changed \| ConfigMap \| agents \| cm-299 \|/, "the table lists every object even when details are cut");
    });
});

describe("JSON report", () => {
    it("carries the same content with a format version, and failures separately", async () => {
        const r = await report({ base: [], head: [finding("new")] });
        const parsed = JSON.parse(renderJson([r], [{ stack: "dev", error: "could not render" }]));
        assert.equal(parsed.formatVersion, 1);
        const s = parsed.stacks[0];
        assert.equal(s.stack, "prod");
        assert.equal(s.hasChanges, true);
        assert.deepEqual(s.objects.added, [{ apiVersion: "v1", kind: "ConfigMap", namespace: "agents", name: "new-only" }]);
        assert.equal(s.objects.changed.length, 3);
        assert.equal(s.policy.appeared[0].message, "new");
        assert.deepEqual(parsed.failures, [{ stack: "dev", error: "could not render" }]);
    });
});

describe("arguments", () => {
    it("accepts repeated --stack, --base and --format; refuses what it does not know", () => {
        assert.deepEqual(parseArgs(["--stack", "prod", "--stack=dev", "--base", "main", "--format", "json"]), { stacks: ["prod", "dev"], base: "main", format: "json" });
        assert.throws(() => parseArgs(["--stack", "prod"]), /--base is required/);
        assert.throws(() => parseArgs(["--base", "main"]), /--stack is required/);
        assert.throws(() => parseArgs(["--stack", "prod", "--base", "main", "--format", "html"]), /--format must be markdown or json/);
        assert.throws(() => parseArgs(["--stack", "prod", "--base", "main", "--colour"]), /unknown argument --colour/);
    });

    it("prints a failure in the Markdown report instead of a diff", () => {
        const md = formatOutcome({ reports: [], failures: [{ stack: "prod", error: "the base revision main could not be rendered: boom" }] }, "markdown");
        assert.match(md, /### Stack `prod`: not diffed\n\n:warning: the base revision main could not be rendered: boom/);
    });
});
