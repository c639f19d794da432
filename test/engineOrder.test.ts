import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { hasSettlingWait, INGRESS_TYPE, placedInOwnNamespace, SKIP_AWAIT_ANNOTATION, waitsFor } from "../components/lib/engineOrder";
import type { RegisteredResource } from "../cli/harness/program";
import { readStackValues } from "../cli/harness/stackConfig";
import { renderStack } from "./render";

const meta = (r: RegisteredResource) => (r.inputs as { metadata?: { name?: string; namespace?: string; annotations?: Record<string, string> } }).metadata ?? {};
const kindOf = (r: RegisteredResource) => r.type.split(":").pop()!;
const label = (r: RegisteredResource) => `${kindOf(r)} ${meta(r).namespace ?? ""}/${meta(r).name ?? r.name}`;

/** Everything a resource's registration waits for: its own dependencies and its ancestors' (a child registers after its parent). */
function waitsOf(resources: RegisteredResource[], r: RegisteredResource): Set<string> {
    const byUrn = new Map(resources.map((x) => [x.urn, x]));
    const out = new Set<string>();
    for (let x: RegisteredResource | undefined = r; x; x = x.parent ? byUrn.get(x.parent) : undefined) for (const d of x.dependencies) out.add(d);
    return out;
}

const APPLICATION_COMPONENTS = /^ops:(apps|data):/;

test("engineOrder: an object waits for its own namespace's guardrails, an Ingress also for the ingress controller; cluster-scoped objects for no namespace", () => {
    const guard = { ns: [new pulumi.ComponentResource("test:x", "ns-a")] };
    const every = new pulumi.ComponentResource("test:x", "every");
    const ingress = new pulumi.ComponentResource("test:x", "ingress");
    const placement = { guardrails: (n: string) => (n === "a" ? guard.ns : undefined), everyNamespace: every, ingressController: ingress };
    assert.deepEqual(waitsFor("kubernetes:apps/v1:Deployment", { metadata: { name: "d", namespace: "a" } }, placement), guard.ns);
    assert.deepEqual(waitsFor(INGRESS_TYPE, { metadata: { name: "i", namespace: "a" } }, placement), [...guard.ns, ingress]);
    assert.deepEqual(waitsFor("kubernetes:rbac.authorization.k8s.io/v1:ClusterRole", { metadata: { name: "c" } }, placement), []);
    // Not the program's namespace, or not known yet: every namespace (never less than before).
    assert.deepEqual(waitsFor("kubernetes:core/v1:Secret", { metadata: { name: "s", namespace: "elsewhere" } }, placement), [every]);
    assert.deepEqual(waitsFor("kubernetes:core/v1:Secret", { metadata: pulumi.output({ name: "s", namespace: "a" }) }, placement), [every]);
    assert.deepEqual(waitsFor("kubernetes:core/v1:Secret", { metadata: { name: "s", namespace: pulumi.output("a") } }, placement), [every]);
    assert.deepEqual(waitsFor("random:index/randomPassword:RandomPassword", { length: 10 }, placement), []);
    // The transformation keeps the object's own dependsOn.
    const own = new pulumi.ComponentResource("test:x", "own");
    const r = placedInOwnNamespace(placement)({ type: "kubernetes:core/v1:ConfigMap", name: "c", props: { metadata: { namespace: "a" } }, opts: { dependsOn: [own] }, resource: undefined as unknown as pulumi.Resource });
    assert.deepEqual(r?.opts.dependsOn, [own, ...guard.ns]);
    assert.equal(placedInOwnNamespace(placement)({ type: "random:index/randomPassword:RandomPassword", name: "p", props: {}, opts: {}, resource: undefined as unknown as pulumi.Resource }), undefined);
});

test("engineOrder: only a Service with a selector, not headless, has the provider's settling wait", () => {
    assert.equal(hasSettlingWait({ type: "ClusterIP", selector: { a: "b" } }), true);
    assert.equal(hasSettlingWait({ type: "NodePort", selector: { a: "b" } }), true);
    assert.equal(hasSettlingWait({ clusterIP: "None", selector: { a: "b" } }), false);
    assert.equal(hasSettlingWait({ type: "ClusterIP" }), false);
    assert.equal(hasSettlingWait({ type: "ExternalName" }), false);
});

for (const stack of ["ci", "prod"]) {
    test(`engineOrder (${stack}): application objects wait for their own namespace's guardrails only; Ingresses for the ingress controller`, async () => {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        const rs = r.resources;
        const urnOf = (type: string, name: string, namespace?: string) => {
            const urn = urnByKey.get(`${type} ${namespace}/${name}`);
            assert.ok(urn, `${type} ${namespace}/${name} in the ${stack} render`);
            return urn;
        };
        const namespaceUrns = new Map(rs.filter((x) => x.type === "kubernetes:core/v1:Namespace").map((x) => [x.urn, meta(x).name!]));
        const ingressRelease = rs.find((x) => x.type === "kubernetes:helm.sh/v3:Release" && (x.inputs as { chart?: string }).chart === "ingress-nginx");
        assert.ok(ingressRelease, "the ingress-nginx release");
        const appComponents = new Set(rs.filter((x) => !x.custom && APPLICATION_COMPONENTS.test(x.type)).map((x) => x.urn));
        assert.ok(appComponents.size >= 9, "the application and data store components");
        const byUrn = new Map(rs.map((x) => [x.urn, x]));
        const ancestors = (x: RegisteredResource): string[] => (x.parent ? [x.parent, ...ancestors(byUrn.get(x.parent)!)] : []);
        const urnByKey = new Map(rs.map((y) => [`${y.type} ${meta(y).namespace}/${meta(y).name}`, y.urn]));
        const appObjects = rs.filter((x) => x.custom && x.type.startsWith("kubernetes:") && ancestors(x).some((a) => appComponents.has(a)));
        assert.ok(appObjects.length > 100);
        const problems: string[] = [];
        for (const o of appObjects) {
            const waits = waitsOf(rs, o);
            const ns = meta(o).namespace;
            const waitedNamespaces = [...waits].filter((u) => namespaceUrns.has(u)).map((u) => namespaceUrns.get(u));
            if (ns !== undefined) {
                if (!waits.has(urnOf("kubernetes:core/v1:Namespace", ns))) problems.push(`${label(o)} does not wait for its Namespace`);
                if (!waits.has(urnOf("kubernetes:core/v1:LimitRange", "container-defaults", ns))) problems.push(`${label(o)} does not wait for its namespace's LimitRange`);
                if (!waits.has(urnOf("kubernetes:networking.k8s.io/v1:NetworkPolicy", "default-deny", ns))) problems.push(`${label(o)} does not wait for its namespace's default-deny policy`);
            }
            const foreign = waitedNamespaces.filter((n) => n !== ns);
            if (foreign.length > 0) problems.push(`${label(o)} waits for other namespaces: ${foreign.join(", ")}`);
            const waitsForIngress = waits.has(ingressRelease.urn);
            if (o.type === INGRESS_TYPE && !waitsForIngress) problems.push(`${label(o)} does not wait for the ingress controller`);
            if (o.type !== INGRESS_TYPE && waitsForIngress) problems.push(`${label(o)} waits for the ingress controller`);
        }
        assert.deepEqual(problems, []);
        // No application component waits for the whole of the namespaces' guardrails any more.
        const guardrailObjects = rs.filter((x) => x.urn.includes("ops:platform:Namespaces$")).map((x) => x.urn);
        for (const c of rs.filter((x) => appComponents.has(x.urn)))
            assert.ok(c.dependencies.filter((d) => guardrailObjects.includes(d)).length <= 1, `${c.type} ${c.name} waits for ${c.dependencies.length} objects of other components`);
    });

    test(`engineOrder (${stack}): the workflow tool waits for the database and queue objects it uses, the search engine for the object store only with s3 snapshots`, async () => {
        const r = await renderStack(stack);
        const rs = r.resources;
        const component = (type: string) => rs.find((x) => x.type === type)!;
        const named = (urns: string[]) => urns.map((u) => rs.find((x) => x.urn === u)!).map((x) => `${kindOf(x)} ${meta(x).namespace}/${meta(x).name}`).sort();
        const workflow = component("ops:apps:Workflow");
        const workflowNs = meta(rs.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && meta(x).name === "workflow-main")!).namespace;
        const dataNs = meta(rs.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && meta(x).name === "postgres")!).namespace;
        // Checked against components/workflow.ts: the credentials Secrets it mounts (workflowStoreSecrets), the server it connects to, the database the provisioning Job makes.
        assert.deepEqual(named(workflow.dependencies), [
            `Job ${dataNs}/postgres-provision`,
            `Secret ${workflowNs}/workflow-postgres`,
            `Secret ${workflowNs}/workflow-redis`,
            `StatefulSet ${dataNs}/postgres`,
            `StatefulSet ${dataNs}/redis`,
        ].sort());
        const search = component("ops:apps:SearchEngine");
        const snapshotType = readStackValues(stack).config["ops:searchEngineSnapshotType"] ?? "fs";
        // s3: the bucket provisioning Job (bucket made), the server, the credentials Secret the nodes' keystore reads (components/searchEngine.ts).
        const storeNs = meta(rs.find((x) => x.type === "kubernetes:apps/v1:StatefulSet" && meta(x).name === "object-store")!).namespace;
        const madeCredentials = rs.filter((x) => x.urn.includes("ops:data:ObjectStore$kubernetes:core/v1:Secret") && meta(x).namespace !== storeNs).map((x) => `Secret ${meta(x).namespace}/${meta(x).name}`);
        assert.deepEqual(named(search.dependencies), snapshotType === "s3" ? [`Job ${storeNs}/object-store-provision`, ...madeCredentials, `StatefulSet ${storeNs}/object-store`].sort() : [], `snapshots to ${snapshotType}`);
    });

    test(`engineOrder (${stack}): every Service that skips the provider's 10 s settling wait selects the pods of a workload whose own wait the engine keeps`, async () => {
        const r = await renderStack(stack);
        const services = r.objects.filter((o) => o.kind === "Service");
        const workloads = r.objects.filter((o) => o.kind === "Deployment" || o.kind === "StatefulSet");
        const settling = services.filter((s) => hasSettlingWait(s.spec));
        assert.ok(settling.length >= 8);
        for (const s of services) {
            const skips = s.metadata?.annotations?.[SKIP_AWAIT_ANNOTATION] === "true";
            const where = `Service ${s.metadata?.namespace}/${s.metadata?.name}`;
            if (!hasSettlingWait(s.spec)) {
                assert.equal(skips, false, `${where} has no settling wait to skip`);
                continue;
            }
            assert.equal(skips, true, `${where}: its 10 s settling wait is skipped`);
            const selector = Object.entries(s.spec.selector as Record<string, string>);
            const selected = workloads.filter((w) => w.metadata?.namespace === s.metadata?.namespace && selector.every(([k, v]) => w.spec.template.metadata?.labels?.[k] === v));
            assert.ok(selected.length >= 1, `${where} selects the pods of no Deployment or StatefulSet of the ${stack} render`);
        }
        // What waits for such a Service: an Ingress, whose own wait checks the Service's endpoints
        // (provider/pkg/await/ingress.go), or something that also waits for the workload behind it.
        const skipped = r.resources.filter((x) => x.type === "kubernetes:core/v1:Service" && meta(x).annotations?.[SKIP_AWAIT_ANNOTATION] === "true");
        const workloadUrns = r.resources.filter((x) => x.type === "kubernetes:apps/v1:Deployment" || x.type === "kubernetes:apps/v1:StatefulSet");
        for (const svc of skipped) {
            const selector = Object.entries(((svc.inputs as any).spec.selector ?? {}) as Record<string, string>);
            const behind = workloadUrns.filter((w) => meta(w).namespace === meta(svc).namespace && selector.every(([k, v]) => (w.inputs as any).spec?.template?.metadata?.labels?.[k] === v)).map((w) => w.urn);
            for (const d of r.resources.filter((x) => x.dependencies.includes(svc.urn) && x.type !== INGRESS_TYPE))
                assert.ok(behind.some((w) => waitsOf(r.resources, d).has(w)), `${label(d)} waits for ${label(svc)} but not for the workload behind it`);
        }
    });
}
