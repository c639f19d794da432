/**
 * End to end through the analyzer gRPC protocol: the real pack (policies/) started the way the
 * Pulumi engine starts a nodejs policy pack, configured with the prod pack config, handed the
 * whole rendered prod stack in one AnalyzeStack call.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startPack, type Diagnostic, type RunningPack } from "../policies/pack/grpc";
import { stackResourcesOf } from "../policies/pack/render";
import type { PackResource } from "../policies/pack/resources";
import { loadPackConfig, runPack } from "../policies/pack/run";
import type { RegisteredResource } from "../cli/harness/program";
import { renderStack } from "./render";

let pack: RunningPack;
before(async () => {
    pack = await startPack();
});
after(() => pack?.stop());

/** The render's resources as the engine sends them: props with Pulumi's secret marks, parents by URN. */
async function prodStack() {
    const rendered = await renderStack("prod");
    assert.deepEqual(rendered.errors, []);
    const resources = rendered.resources.map((r: RegisteredResource) => ({ type: r.type, urn: r.urn, name: r.name, props: r.inputs }));
    const parents = new Map(rendered.resources.filter((r) => r.parent).map((r) => [r.urn, r.parent!]));
    return { rendered, resources, parents };
}

test("GetAnalyzerInfo names the pack and its policies with their declared levels", async () => {
    const info = await pack.info();
    assert.equal(info.name, "ops-environment");
    const levels = Object.fromEntries(info.policies.map((p) => [p.name, p.enforcementLevel]));
    assert.equal(levels["gatekeeper-deny"], "mandatory");
    assert.equal(levels["gatekeeper-warn"], "advisory");
    assert.equal(levels["gatekeeper-dryrun"], "advisory");
    assert.equal(levels["no-plaintext-secrets"], "mandatory");
});

const show = (ds: Diagnostic[]) => ds.map((d) => `[${d.enforcementLevel}] ${d.policyName}: ${d.violation}`).join("\n");

test("the rendered prod stack has no mandatory violation", async () => {
    await pack.configure(loadPackConfig("prod"));
    const { resources, parents } = await prodStack();
    const diagnostics = await pack.analyzeStack(resources, parents);
    const mandatory = diagnostics.filter((d) => d.enforcementLevel === "mandatory");
    assert.deepEqual(mandatory, [], show(mandatory));
    // The environment's own audit finds nothing (every container has an ephemeral-storage limit) ...
    assert.deepEqual(diagnostics.filter((d) => d.violation.startsWith("dryrun: ")).map((d) => d.violation), []);
    // ... and a container without one is reported, as advisory with the dryrun: prefix.
    const broken = structuredClone(resources) as PackResource[];
    const app = broken.find((r) => r.type === "kubernetes:apps/v1:Deployment")!;
    delete app.props.spec.template.spec.containers[0].resources.limits["ephemeral-storage"];
    const dryrun = (await pack.analyzeStack(broken, parents)).filter((d) => d.violation.startsWith("dryrun: "));
    assert.deepEqual(dryrun.map((d) => [d.policyName, d.enforcementLevel, d.urn]), [["gatekeeper-dryrun", "advisory", app.urn]], show(dryrun));
    assert.match(dryrun[0].violation, /K8sContainerEphemeralStorageLimit\/ephemeral-storage-limit: .*has no ephemeral-storage limit/);
});

test("a broken resource in the prod stack is reported as mandatory by the constraints and the spec rules", async () => {
    await pack.configure(loadPackConfig("prod"));
    const { rendered, parents } = await prodStack();
    // A privileged container with a literal password and a tag-only image in prod.
    const broken = structuredClone(stackResourcesOf(rendered));
    const app = broken.find((r) => r.type === "kubernetes:apps/v1:Deployment")!;
    const container = app.props.spec.template.spec.containers[0];
    container.securityContext.privileged = true;
    container.image = container.image.replace(/@sha256:[0-9a-f]{64}$/, "");
    container.env = [...(container.env ?? []), { name: "DB_PASSWORD", value: "hunter2" }];
    const reported = (await pack.analyzeStack(broken, parents)).filter((d) => d.urn === app.urn && d.enforcementLevel === "mandatory");
    const policies = new Set(reported.map((d) => d.policyName));
    assert.deepEqual([...policies].sort(), ["gatekeeper-deny", "images-pinned-by-digest", "no-plaintext-secrets"], show(reported));
    assert.ok(reported.some((d) => /K8sPSPPrivilegedContainer\/no-privileged/.test(d.violation)), show(reported));
});

test("through gRPC the pack reports exactly what it reports in process, one named policy per rule", async () => {
    const config = loadPackConfig("prod");
    await pack.configure(config);
    const { rendered, resources, parents } = await prodStack();
    // Broken in several ways so that several named policies report.
    const broken = structuredClone(resources) as PackResource[];
    const app = broken.find((r) => r.type === "kubernetes:apps/v1:Deployment")!;
    const container = app.props.spec.template.spec.containers[0];
    container.securityContext.privileged = true;
    container.image = container.image.replace(/@sha256:[0-9a-f]{64}$/, "");
    delete container.resources.limits["ephemeral-storage"];
    const viaGrpc = await pack.analyzeStack(broken, parents);
    const plain = structuredClone(stackResourcesOf(rendered));
    const plainApp = plain.find((r) => r.urn === app.urn)!;
    plainApp.props.spec.template.spec.containers[0].securityContext.privileged = true;
    plainApp.props.spec.template.spec.containers[0].image = container.image;
    delete plainApp.props.spec.template.spec.containers[0].resources.limits["ephemeral-storage"];
    const inProcess = runPack(plain, config).violations;
    const key = (policy: string, level: string, message: string, urn?: string) => `${level} ${policy} ${urn ?? ""} ${message}`;
    assert.deepEqual(
        viaGrpc.map((d) => key(d.policyName, d.enforcementLevel, d.violation, d.urn || undefined)).sort(),
        inProcess.map((v) => key(v.policy, v.enforcementLevel, v.message, v.urn)).sort(),
    );
    assert.ok(new Set(viaGrpc.map((d) => d.policyName)).size >= 3, show(viaGrpc));
});
