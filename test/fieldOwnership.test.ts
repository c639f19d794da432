import { test } from "node:test";
import * as assert from "node:assert/strict";
import * as pulumi from "@pulumi/pulumi";
import { AUTOSCALED_REPLICAS, forceDeclaredFields, isKubernetesObject, PATCH_FORCE_ANNOTATION, programOwned } from "../components/lib/fieldOwnership";
import { all, renderStack } from "./render";

const transform = (type: string, props: Record<string, unknown>) =>
    forceDeclaredFields({ type, name: "x", props, opts: {}, resource: undefined as unknown as pulumi.Resource });

test("fieldOwnership: Kubernetes objects get pulumi.com/patchForce, their own annotations kept; helm releases and other providers untouched", async () => {
    const r = transform("kubernetes:apps/v1:Deployment", { metadata: { name: "a", annotations: { keep: "me" } }, spec: {} });
    assert.deepEqual(r?.props.metadata, { name: "a", annotations: { keep: "me", [PATCH_FORCE_ANNOTATION]: "true" } });
    assert.deepEqual(transform("kubernetes:cert-manager.io/v1:ClusterIssuer", { metadata: { name: "b" } })?.props.metadata, { name: "b", annotations: { [PATCH_FORCE_ANNOTATION]: "true" } });
    const later = transform("kubernetes:core/v1:Secret", { metadata: { name: "c", annotations: pulumi.output({ x: "y" }) } });
    const annotations = await new Promise((resolve) => (later?.props.metadata as { annotations: pulumi.Output<Record<string, string>> }).annotations.apply(resolve));
    assert.deepEqual(annotations, { x: "y", [PATCH_FORCE_ANNOTATION]: "true" });
    for (const t of ["kubernetes:helm.sh/v3:Release", "kubernetes:yaml/v2:ConfigGroup", "random:index/randomPassword:RandomPassword", "ops:apps:Bridge", "pulumi:providers:kubernetes"]) {
        assert.equal(isKubernetesObject(t), false, t);
        assert.equal(transform(t, { metadata: { name: "d" } }), undefined, t);
    }
    assert.deepEqual(programOwned({ dependsOn: [] }).transformations, [forceDeclaredFields]);
});

for (const stack of ["ci", "prod"]) {
    test(`fieldOwnership (${stack}): every object carries patchForce; every workload an autoscaler scales leaves spec.replicas to it`, async () => {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        const without = r.objects.filter((o) => o.metadata?.annotations?.[PATCH_FORCE_ANNOTATION] !== "true").map((o) => `${o.kind} ${o.metadata?.namespace}/${o.metadata?.name}`);
        assert.deepEqual(without, [], "objects without pulumi.com/patchForce: a drift of theirs could not be repaired");
        const hpas = all(r, "HorizontalPodAutoscaler");
        assert.ok(hpas.length >= 2, "the bridge and the workflow workers are autoscaled");
        for (const hpa of hpas) {
            const { kind, name } = hpa.spec.scaleTargetRef;
            const target = r.resources.find((x) => x.type.endsWith(`:${kind}`) && (x.inputs as any).metadata?.name === name && (x.inputs as any).metadata?.namespace === hpa.metadata?.namespace);
            assert.ok(target, `the target ${kind} ${name} of the autoscaler ${hpa.metadata?.name}`);
            assert.deepEqual(target.ignoreChanges, AUTOSCALED_REPLICAS.ignoreChanges, `${kind} ${name}: the autoscaler owns spec.replicas`);
        }
        const others = r.resources.filter((x) => x.ignoreChanges && !hpas.some((h) => h.spec.scaleTargetRef.name === (x.inputs as any).metadata?.name));
        assert.deepEqual(others.map((x) => x.urn), [], "no other resource ignores changes: drift of anything else is repaired");
    });
}
