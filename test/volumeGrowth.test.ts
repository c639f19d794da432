/**
 * Issue 29: a data volume that grows (components/lib/claimGrowth.ts), as the program declares it
 * and as `npm run explain` and `npm run diff` describe it. The engine side (preview, up, the claims,
 * pods and data kept, a shrink refused) runs in `npm run e2e` (tools/e2e/steps/volumeGrowth.ts).
 */
import assert from "node:assert/strict";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, it } from "node:test";
import * as YAML from "yaml";
import { buildReport } from "../cli/diff/report";
import { renderMarkdown } from "../cli/diff/markdown";
import { explainDiff } from "../cli/diff/explain";
import { explain } from "../cli/explain/index";
import { explainMarkdown } from "../cli/explain/format";
import { volumeChanges, volumes } from "../cli/explain/volumes";
import { workloadsOf } from "../cli/explain/workloads";
import { CLAIM_SIZES_ANNOTATION, CLAIM_SIZE_KEYS_ANNOTATION, ORPHAN_ANNOTATION } from "../components/lib/claimAnnotations";
import { REPO_ROOT } from "../cli/harness/stackConfig";
import type { K8sObject } from "../policies/gatekeeper/types";
import { all, renderStack } from "./render";

const declared = Object.keys(YAML.parse(fs.readFileSync(path.join(REPO_ROOT, "Pulumi.yaml"), "utf8")).config ?? {});
const withClaims = (objects: K8sObject[]) => objects.filter((o) => o.kind === "StatefulSet" && (o.spec?.volumeClaimTemplates ?? []).length > 0);
const pairs = (v: string) => new Map(v.split(",").map((p) => p.split("=") as [string, string]));

describe("volume growth: what the program declares", () => {
    for (const stack of ["ci", "prod"]) {
        it(`${stack}: every StatefulSet with claims carries the orphan policy, its sizes and their config keys; one claim patch per claim, after the StatefulSet; no patch in the render`, async () => {
            const r = await renderStack(stack);
            const sets = withClaims(r.objects);
            const autoscaledSets: string[] = [];
            assert.ok(sets.length >= 7, `StatefulSets with claims: ${sets.map((s) => s.metadata?.name).join(" ")}`);
            for (const s of sets) {
                const a = s.metadata!.annotations ?? {};
                const id = `${s.metadata!.namespace}/${s.metadata!.name}`;
                assert.equal(a[ORPHAN_ANNOTATION], "orphan", id);
                const sizes = pairs(a[CLAIM_SIZES_ANNOTATION]);
                const keys = pairs(a[CLAIM_SIZE_KEYS_ANNOTATION]);
                for (const t of s.spec.volumeClaimTemplates) {
                    assert.equal(sizes.get(t.metadata.name), t.spec.resources.requests.storage, `${id} ${t.metadata.name}`);
                    assert.ok(declared.includes(keys.get(t.metadata.name)!), `${id}: ${keys.get(t.metadata.name)} is not a config key of Pulumi.yaml`);
                }
                const setResource = r.resources.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && (x.inputs as any).metadata?.name === s.metadata!.name && (x.inputs as any).metadata?.namespace === s.metadata!.namespace)!;
                const setUrn = setResource.urn;
                const patches = r.resources.filter((x) => x.type === "kubernetes:core/v1:PersistentVolumeClaimPatch" && (x.inputs as any).metadata?.namespace === s.metadata!.namespace && x.dependencies.includes(setUrn));
                // An autoscaled StatefulSet's claims are the autoscaler's doing: none is patched.
                const autoscaled = (setResource.ignoreChanges ?? []).includes("spec.replicas");
                if (autoscaled) autoscaledSets.push(id);
                const expected = autoscaled ? [] : s.spec.volumeClaimTemplates.flatMap((t: any) => Array.from({ length: s.spec.replicas ?? 1 }, (_, i) => `${t.metadata.name}-${s.metadata!.name}-${i}=${t.spec.resources.requests.storage}`));
                assert.deepEqual(patches.map((p) => `${(p.inputs as any).metadata.name}=${(p.inputs as any).spec.resources.requests.storage}`).sort(), expected.sort(), id);
                for (const p of patches) assert.deepEqual(Object.keys((p.inputs as any).spec), ["resources"], "a patch applies the size only");
                const marker = r.resources.find((x) => x.type === "random:index/randomString:RandomString" && (x.inputs as any).keepers?.sizes === a[CLAIM_SIZES_ANNOTATION] && x.parent === r.resources.find((y) => y.urn === setUrn)!.parent);
                assert.ok(marker, `${id}: no size marker whose keepers are ${a[CLAIM_SIZES_ANNOTATION]}`);
            }
            assert.equal(r.objects.filter((o) => o.kind === "PersistentVolumeClaim" && !o.spec?.accessModes).length, 0, "a claim patch is not an object of the render");
            assert.deepEqual(autoscaledSets, ["workflow/workflow-worker"], "the one autoscaled StatefulSet with claims (its HorizontalPodAutoscaler, components/workflow.ts)");
        });
    }

    it("each size key is the key of that size: set to new values, every template follows its key", async () => {
        const { keys, overrides, grown } = await grownAll();
        for (const s of withClaims(grown.objects)) {
            for (const t of s.spec.volumeClaimTemplates) {
                const key = keys.get(`${s.metadata!.namespace}/${s.metadata!.name}/${t.metadata.name}`)!;
                assert.equal(t.spec.resources.requests.storage, overrides[key], `${s.metadata!.name}/${t.metadata.name} <- ${key}`);
            }
        }
    });
});

/** ci with every size key set to a bigger, distinct value (one render for the growth tests). */
async function grownAll() {
    const base = await renderStack("ci");
    const keys = new Map<string, string>();
    for (const s of withClaims(base.objects)) for (const [t, k] of pairs(s.metadata!.annotations![CLAIM_SIZE_KEYS_ANNOTATION])) keys.set(`${s.metadata!.namespace}/${s.metadata!.name}/${t}`, k);
    const distinct = [...new Set(keys.values())].sort();
    const overrides: Record<string, string> = Object.fromEntries(distinct.map((k, i) => [k, `${31 + i}Gi`]));
    return { base, keys, overrides, grown: await renderStack("ci", overrides) };
}

describe("volume growth: npm run explain and npm run diff say the same", () => {
    it("a bigger size: each claim expanded in place, the StatefulSet re-created around its pods; explain and diff in the same words", async () => {
        const { base, overrides, grown: head } = await grownAll();
        const to = overrides.postgresVolumeSize;
        const before = all(base, "StatefulSet").find((s) => s.metadata?.name === "postgres")!;
        const ns = before.metadata!.namespace!;
        assert.equal(before.spec.volumeClaimTemplates[0].spec.resources.requests.storage, "5Gi", "the ci stack's PostgreSQL volume (Pulumi.ci.yaml)");

        const explained = explain({ stack: "ci", objects: head.redactedObjects, files: head.files });
        const row = explained.volumes.volumes.find((v) => v.workload === `${ns}/postgres`)!;
        assert.deepEqual([row.template, row.size, row.configKey, row.claims, row.growable], ["data", to, "postgresVolumeSize", ["data-postgres-0"], true]);
        assert.match(row.onGrowth, /expanded in place by a PersistentVolumeClaimPatch/);
        assert.match(row.onGrowth, /orphaned, not deleted/);
        assert.ok(explainMarkdown(explained).includes(row.onGrowth.replace(/</g, "&lt;").replace(/>/g, "&gt;")), "explain's Markdown prints the sentence");

        const d = explainDiff("ci", { objects: base.redactedObjects, files: base.files }, { objects: head.redactedObjects, files: head.files });
        assert.equal(d.available, true);
        const said = d.available ? d.changes.filter((c) => c.area === "volumes" && c.text.startsWith(`${ns}/postgres: `)).map((c) => c.text) : [];
        assert.deepEqual(said, [`${ns}/postgres: volume data 5Gi → ${to} (config key postgresVolumeSize): ${row.onGrowth}`]);

        const report = await buildReport("ci", { info: { ref: "base", problems: [] }, objects: base.redactedObjects, resources: [], files: base.files }, { info: { ref: "working tree", problems: [] }, objects: head.redactedObjects, resources: [], files: head.files }, {});
        const md = renderMarkdown(report);
        assert.match(md, /\*\*replace\*\* StatefulSet data\/postgres: `spec\.volumeClaimTemplates\[0\]\.spec\.resources\.requests\.storage`/);
        assert.ok(md.includes(`> **Volume growth of StatefulSet ${ns}/postgres.** ${said[0]}`), md.slice(0, 3000));
        assert.doesNotMatch(md, /not supported/);
    });

    it("a shrink is refused with the reason and the config key; a class change is refused; the sizes of other StatefulSets are not named", async () => {
        const base = await renderStack("ci");
        const head = await renderStack("ci", { postgresVolumeSize: "2Gi" });
        const changes = volumeChanges(volumes(base.redactedObjects, workloadsOf(base.redactedObjects)), volumes(head.redactedObjects, workloadsOf(head.redactedObjects)));
        assert.equal(changes.length, 1);
        assert.equal(changes[0].refused, true);
        assert.match(changes[0].text, /^refused: data\/postgres: volume data 5Gi → 2Gi \(config key postgresVolumeSize\): a claim cannot shrink/);
        assert.match(changes[0].text, /set postgresVolumeSize back to 5Gi or more/);
        const report = await buildReport("ci", { info: { ref: "base", problems: [] }, objects: base.redactedObjects, resources: [], files: base.files }, { info: { ref: "working tree", problems: [] }, objects: head.redactedObjects, resources: [], files: head.files }, {});
        assert.match(renderMarkdown(report), /> \*\*Refused: the volume claim templates of StatefulSet data\/postgres\.\*\* data\/postgres: volume data 5Gi → 2Gi/);

        const withClass = (objects: K8sObject[], cls: string) => objects.map((o) => (o.kind === "StatefulSet" && o.metadata?.name === "postgres" ? { ...o, spec: { ...o.spec, volumeClaimTemplates: [{ ...o.spec.volumeClaimTemplates[0], spec: { ...o.spec.volumeClaimTemplates[0].spec, storageClassName: cls } }] } } : o));
        const moved = volumeChanges(volumes(base.redactedObjects, workloadsOf(base.redactedObjects)), volumes(withClass(base.redactedObjects, "fast"), workloadsOf(withClass(base.redactedObjects, "fast"))));
        assert.equal(moved.length, 1);
        assert.match(moved[0].text, /^refused: .*spec\.storageClassName is immutable/);
    });

    it("the workflow volume: the main StatefulSet's claim expanded; the autoscaled workers re-created, their claims named as not patched", async () => {
        const { base, grown: head } = await grownAll();
        const changes = volumeChanges(volumes(base.redactedObjects, workloadsOf(base.redactedObjects)), volumes(head.redactedObjects, workloadsOf(head.redactedObjects))).filter((c) => c.workload.startsWith("workflow/"));
        assert.deepEqual(changes.map((c) => [c.workload, c.refused]), [["workflow/workflow-main", false], ["workflow/workflow-worker", false]]);
        assert.match(changes[0].text, /each claim \(data-workflow-main-0\) is expanded in place/);
        assert.match(changes[1].text, /its existing claims keep their size .* patches none/);
        assert.match(changes[1].text, /orphaned, not deleted/);
    });

    it("a StatefulSet not made to grow (no orphan policy): its size change is refused as not supported, with the reason", () => {
        const sts = (size: string): K8sObject => ({ apiVersion: "apps/v1", kind: "StatefulSet", metadata: { name: "db", namespace: "n" }, spec: { replicas: 2, template: { spec: { containers: [] } }, volumeClaimTemplates: [{ metadata: { name: "data" }, spec: { resources: { requests: { storage: size } } } }] } });
        const c = volumeChanges(volumes([sts("1Gi")], workloadsOf([sts("1Gi")])), volumes([sts("2Gi")], workloadsOf([sts("2Gi")])));
        assert.equal(c.length, 1);
        assert.match(c[0].text, /^refused: n\/db: volume data 1Gi → 2Gi: not supported: .*pulumi-kubernetes#4328/);
    });
});
