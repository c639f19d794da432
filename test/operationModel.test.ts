/**
 * Issue 43 class 1, the operation model where users meet it: `npm run diff` judges the working tree
 * with the base revision's objects as the earlier state, and `npm run render -- --previous DIR` with
 * an earlier render's. A team template that judges only objects already on the cluster (operation
 * "" or UPDATE, as teams write for Gatekeeper's audit) then reports an unchanged object and not a
 * new one, and one that guards updates sees the old object. Without the earlier state every object
 * was a CREATE: the unchanged object was never reported and the update never seen.
 */
import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { test } from "node:test";
import { parseArgs } from "../cli/render";
import { buildReport, type RenderedSide } from "../cli/diff/report";
import type { PolicyEvaluator, PolicyResource } from "../cli/diff/policy";
import { earlierState, earlierStateLine, readEarlierRender } from "../cli/harness/earlierRender";
import type { ResourceRecord } from "../cli/harness/manifests";
import { createEvaluator, loadConstraintSet } from "../policies/gatekeeper/engine";
import type { K8sObject } from "../policies/gatekeeper/types";
import { gatekeeperPolicy } from "../policies/pack/gatekeeper";
import { runPack } from "../policies/pack/run";
import { viewOf } from "../policies/pack/rule";
import { packTemplatesWith } from "../policies/pack/templates";

/** A team's CEL-only template in the audit's style: existing objects need an owner; an update must keep data.mode. */
const TEAM_TEMPLATE = `apiVersion: templates.gatekeeper.sh/v1
kind: ConstraintTemplate
metadata:
  name: k8stestexistingowner
spec:
  crd:
    spec:
      names:
        kind: K8sTestExistingOwner
  targets:
    - target: admission.k8s.gatekeeper.sh
      code:
        - engine: K8sNativeValidation
          source:
            validations:
              - expression: "request.operation == 'CREATE' || (has(object.metadata.labels) && 'owner' in object.metadata.labels)"
                message: "an object on the cluster needs an owner label"
              - expression: "request.operation != 'UPDATE' || oldObject.data.mode == object.data.mode"
                message: "data.mode cannot change once deployed"
`;

const CONSTRAINT = "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: K8sTestExistingOwner\nmetadata: {name: owner}\nspec:\n  match: {kinds: [{apiGroups: [''], kinds: [ConfigMap]}]}\n";

const cm = (name: string, mode: string): K8sObject => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "shop" }, data: { mode } });
const resource = (o: K8sObject): PolicyResource => ({ type: "kubernetes:core/v1:ConfigMap", urn: `urn:pulumi:dev::ops::kubernetes:core/v1:ConfigMap::${o.metadata!.name}`, name: o.metadata!.name!, props: o });

/** The team template judged as the pack judges (the stack's objects from its resources, the earlier ones likewise). */
function teamEvaluator(): { evaluator: PolicyEvaluator; calls: Array<PolicyResource[] | undefined>; cleanup(): void } {
    const dir = mkdtempSync(path.join(tmpdir(), "team-operation-"));
    writeFileSync(path.join(dir, "existingowner.yaml"), TEAM_TEMPLATE);
    const { registry } = packTemplatesWith(dir, "templates");
    const set = loadConstraintSet(CONSTRAINT, registry, "constraints/team.yaml");
    const engine = createEvaluator(set.constraints);
    const calls: Array<PolicyResource[] | undefined> = [];
    const evaluator: PolicyEvaluator = (_stack, resources, previous) => {
        calls.push(previous);
        const { objects } = viewOf(resources);
        const before = previous === undefined ? undefined : viewOf(previous).objects.map((o) => o.object);
        return engine.evaluate(objects.map((o) => o.object), before === undefined ? {} : { previous: before }).map((r) => ({
            policy: "gatekeeper-deny",
            enforcementLevel: "mandatory",
            object: `ConfigMap shop/${r.object.name}`,
            message: r.message,
        }));
    };
    return { evaluator, calls, cleanup: () => rmSync(dir, { recursive: true, force: true }) };
}

const side = (ref: string, objects: K8sObject[]): RenderedSide => ({ info: { ref, problems: [] }, objects, resources: objects.map(resource) });

test("issue 43.1 diff: the working tree is judged with the base's objects as the earlier state; an unchanged object as the audit does, a new one as a creation, a changed one as an update", async () => {
    const team = teamEvaluator();
    try {
        // Deployed (base): "kept" and "tuned", neither with an owner label. The change keeps "kept",
        // changes "tuned"'s mode and adds "added" (no owner label either).
        const base = side("main", [cm("kept", "a"), cm("tuned", "a")]);
        const head = side("working tree", [cm("kept", "a"), cm("tuned", "b"), cm("added", "a")]);
        const r = await buildReport("dev", base, head, { base: team.evaluator, head: team.evaluator });
        assert.ok(r.policy.available, JSON.stringify(r.policy));
        const show = (list: { object: string; message: string }[]) => list.map((f) => `${f.object}: ${f.message}`).sort();
        // The head's earlier state is the base; the base is its own (the audit's view of what is deployed).
        assert.deepEqual(team.calls.map((c) => c?.map((x) => x.name)), [["kept", "tuned"], ["kept", "tuned"]]);
        // "kept" is reported alike on both sides (unchanged: the audit's view), so it neither appears nor goes;
        // "added" is a creation: the template leaves it to admission; "tuned" is an update: its mode change appears.
        assert.deepEqual(show(r.policy.appeared), ["ConfigMap shop/tuned: data.mode cannot change once deployed"]);
        assert.deepEqual(show(r.policy.disappeared), []);
        assert.equal(r.policy.unchangedCount, 2, "kept and tuned lack an owner label on both sides");
    } finally {
        team.cleanup();
    }
});

test("issue 43.1 diff: a stack the base revision does not have is all creations", async () => {
    const team = teamEvaluator();
    try {
        const r = await buildReport("dev", { ...side("main", []), absent: true }, side("working tree", [cm("added", "a")]), { base: team.evaluator, head: team.evaluator });
        assert.ok(r.policy.available);
        assert.deepEqual(r.policy.appeared, []);
        assert.deepEqual(team.calls, [[]]);
    } finally {
        team.cleanup();
    }
});

/** A Kubernetes object's render record (resources.json), its inputs redacted as the render writes them. */
const record = (o: K8sObject, inputs: Record<string, unknown> = o as Record<string, unknown>): ResourceRecord => ({ ...resource(o), inputs }) as unknown as ResourceRecord;

test("issue 43.1 render --previous: the pack's Gatekeeper policy judges an unchanged object as the audit, a changed one as an UPDATE with its old object", () => {
    const dir = mkdtempSync(path.join(tmpdir(), "previous-pack-"));
    try {
        // The library's NoUpdateServiceAccount reads only UPDATEs: a changed service account is a violation.
        const constraints = path.join(dir, "constraints.yaml");
        writeFileSync(constraints, "apiVersion: constraints.gatekeeper.sh/v1beta1\nkind: NoUpdateServiceAccount\nmetadata: {name: keep-sa}\nspec:\n  match: {kinds: [{apiGroups: [apps], kinds: [Deployment]}]}\n");
        const deployment = (name: string, sa: string): K8sObject => ({ apiVersion: "apps/v1", kind: "Deployment", metadata: { name, namespace: "shop" }, spec: { template: { spec: { serviceAccountName: sa, containers: [{ name: "c", image: "x" }] } } } });
        const res = (o: K8sObject): PolicyResource => ({ type: "kubernetes:apps/v1:Deployment", urn: `urn:pulumi:dev::ops::kubernetes:apps/v1:Deployment::${o.metadata!.name}`, name: o.metadata!.name!, props: o });
        const now = [res(deployment("same", "a")), res(deployment("moved", "b"))];
        const before = [res(deployment("same", "a")), res(deployment("moved", "a"))];
        const run = (previous?: PolicyResource[]) => runPack(now, { "gatekeeper-deny": { constraints } }, [gatekeeperPolicy("deny")], previous).violations.map((v) => `${v.urn!.split("::").pop()}: ${v.message}`);
        assert.deepEqual(run(before), ["moved: NoUpdateServiceAccount/keep-sa: user does not have permission to modify serviceAccountName"]);
        assert.deepEqual(run(), [], "without the earlier state every object is a creation, and the template never fires");
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});

test("issue 43.1 render --previous: an earlier record equal to this render's (secrets redacted alike) is this render's own object: unchanged, not an update of its redacted self", () => {
    const redacted = { ...cm("secretish", "a"), data: { mode: "[secret]" } };
    const current = [record(cm("secretish", "a"), redacted), record(cm("changed", "b"))];
    const currentResources = [resource(cm("secretish", "a")), resource(cm("changed", "b"))];
    const earlier = [{ ...resource(cm("secretish", "a")), props: redacted }, resource(cm("changed", "a")), resource(cm("gone", "a"))];
    const state = earlierState(current, currentResources, earlier);
    assert.equal(state[0], currentResources[0], "the unchanged redacted object stands for itself");
    assert.deepEqual(state[1].props, cm("changed", "a"), "a changed object keeps its earlier props (the UPDATE's oldObject)");
    assert.equal(
        earlierStateLine("out/dev/resources.json", current, earlier),
        "policy pack: earlier state from out/dev/resources.json: 0 Kubernetes object(s) new (judged as CREATE), 1 changed (UPDATE, with the old object), 1 unchanged (as Gatekeeper's audit judges them), 1 gone (a deletion is not judged)",
    );
});

test("issue 43.1 render --previous: parsed once, and a bad earlier render is refused naming the folder, the file or the entry", () => {
    assert.deepEqual(parseArgs(["--stack", "dev", "--previous", "out/dev"]), { stack: "dev", out: undefined, previous: "out/dev" });
    assert.throws(() => parseArgs(["--stack", "dev", "--previous", ""]), /--previous needs a folder name; got an empty value/);
    assert.throws(() => parseArgs(["--stack", "dev", "--previous", "a", "--previous=b"]), /--previous is given twice \(a, then b\); give one earlier render/);
    const dir = mkdtempSync(path.join(tmpdir(), "previous-render-"));
    try {
        assert.throws(() => readEarlierRender(path.join(dir, "none"), "dev"), /--previous .*none: not a folder; expected the output folder of an earlier `npm run render -- --stack dev`/);
        assert.throws(() => readEarlierRender(dir, "dev"), /it has no resources\.json/);
        const file = path.join(dir, "resources.json");
        writeFileSync(file, "{");
        assert.throws(() => readEarlierRender(dir, "dev"), /resources\.json: not JSON/);
        writeFileSync(file, JSON.stringify([{ type: "t", urn: "u" }]));
        assert.throws(() => readEarlierRender(dir, "dev"), /entry 0: "name" is not a non-empty string/);
        writeFileSync(file, JSON.stringify([record(cm("x", "a"))].map((r) => ({ ...r, urn: r.urn.replace(":dev:", ":prod:") }))));
        assert.throws(() => readEarlierRender(dir, "dev"), /a render of stack prod .*not of dev/);
        mkdirSync(path.join(dir, "ok"));
        writeFileSync(path.join(dir, "ok", "resources.json"), JSON.stringify([record(cm("x", "a"))]));
        assert.deepEqual(readEarlierRender(path.join(dir, "ok"), "dev").map((r) => r.props), [cm("x", "a")]);
    } finally {
        rmSync(dir, { recursive: true, force: true });
    }
});
