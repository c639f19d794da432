/**
 * The environment's own audit (issue 28, part 3): every container the program emits has an
 * ephemeral-storage request and limit that cover what it writes to the node's disk (its logs and
 * the disk-backed emptyDir volumes it mounts), and the dryrun constraints of dev and prod find
 * nothing; the render lists a dryrun violation by object, constraint and message.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { quantityBytes } from "../config/schema";
import { withEphemeralStorage } from "../components/lib/pod";
import { stackResourcesOf } from "../policies/pack/render";
import { dryrunLine, loadPackConfig, runPack, verdict } from "../policies/pack/run";
import { containersOf, podSpecOf, renderStack } from "./render";

const POD_KINDS = new Set(["Deployment", "StatefulSet", "DaemonSet", "Job", "CronJob"]);
// The kubelet's defaults (KubeletConfiguration v1beta1): containerLogMaxSize 10Mi, containerLogMaxFiles 5.
const LOG_FILES_BYTES = 5 * 10 * 2 ** 20;

for (const stack of ["dev", "prod"]) {
    test(`${stack}: every container has an ephemeral-storage request and limit covering its logs and the emptyDir volumes it mounts`, async () => {
        const r = await renderStack(stack);
        assert.deepEqual(r.errors, []);
        let checked = 0;
        for (const o of r.objects.filter((x) => POD_KINDS.has(x.kind ?? ""))) {
            const spec = podSpecOf(o);
            const disk = new Map<string, number>((spec.volumes ?? []).filter((v: any) => v.emptyDir && v.emptyDir.medium !== "Memory").map((v: any) => [v.name, quantityBytes(v.emptyDir.sizeLimit)]));
            for (const c of containersOf(o)) {
                const at = `${o.kind} ${o.metadata?.namespace}/${o.metadata?.name} container ${c.name}`;
                const limit = c.resources?.limits?.["ephemeral-storage"];
                const request = c.resources?.requests?.["ephemeral-storage"];
                assert.ok(limit && request, `${at}: no ephemeral-storage request and limit`);
                const writes = (c.volumeMounts ?? []).reduce((n: number, m: any) => n + (disk.get(m.name) ?? 0), 0);
                assert.ok(quantityBytes(limit) >= writes + LOG_FILES_BYTES, `${at}: limit ${limit} below its emptyDir volumes and log files`);
                // The request is what it always writes: its log files.
                assert.ok(quantityBytes(request) >= LOG_FILES_BYTES && quantityBytes(request) <= quantityBytes(limit), `${at}: request ${request} not between its log files and its limit ${limit}`);
                // The constraint's own maximum (policies/constraints/*.yaml ephemeral-storage-limit: 10Gi).
                assert.ok(quantityBytes(limit) <= 10 * 2 ** 30, `${at}: limit ${limit} above the constraint's 10Gi`);
                checked++;
            }
        }
        assert.ok(checked > 20, `only ${checked} containers checked`);
    });

    test(`${stack}: the pack's dryrun constraints find nothing in the environment's own objects`, async () => {
        const r = await renderStack(stack);
        const result = runPack(stackResourcesOf(r), loadPackConfig(stack));
        assert.ok(result.policies.includes("gatekeeper-dryrun"), `policies that ran: ${result.policies.join(", ")}`);
        const dryrun = result.violations.filter((v) => v.message.startsWith("dryrun:"));
        assert.deepEqual(dryrun.map(dryrunLine), []);
        assert.match(verdict(result), /, 0 dryrun violation\(s\)$/m);
    });
}

test("the render lists each dryrun violation by object, constraint and message, not only their number", () => {
    const v = {
        policy: "gatekeeper-dryrun",
        enforcementLevel: "advisory" as const,
        message: "dryrun: K8sContainerEphemeralStorageLimit/ephemeral-storage-limit: [Implied by Deployment/booking] container <booking> has no ephemeral-storage limit",
        urn: "urn:pulumi:dev::ops::ops:apps:Booking$kubernetes:apps/v1:Deployment::booking",
    };
    const svc = { ...v, message: "dryrun: K8sBlockNodePort/node-ports-audit: User is not allowed to create service of type NodePort", urn: "urn:pulumi:dev::ops::x$kubernetes:core/v1:Service::column-store" };
    const text = verdict({ violations: [v, svc], policies: ["gatekeeper-dryrun"] });
    assert.equal(text, [
        "policy pack: 1 policies, 0 mandatory, 0 advisory, 2 dryrun violation(s)",
        "  - dryrun Deployment/booking K8sContainerEphemeralStorageLimit/ephemeral-storage-limit: container <booking> has no ephemeral-storage limit",
        "  - dryrun Service/column-store K8sBlockNodePort/node-ports-audit: User is not allowed to create service of type NodePort",
    ].join("\n"));
});

test("an emptyDir without a size limit cannot be sized: named, not guessed", () => {
    assert.throws(
        () => withEphemeralStorage({ containers: [{ name: "app", volumeMounts: [{ name: "scratch", mountPath: "/tmp" }] }], volumes: [{ name: "scratch", emptyDir: {} }] }, "64Mi"),
        /emptyDir volume scratch has no sizeLimit/,
    );
    const sized = withEphemeralStorage({
        containers: [{ name: "app", volumeMounts: [{ name: "a", mountPath: "/a" }, { name: "shm", mountPath: "/dev/shm" }] }],
        initContainers: [{ name: "init" }],
        volumes: [{ name: "a", emptyDir: { sizeLimit: "1Gi" } }, { name: "shm", emptyDir: { medium: "Memory", sizeLimit: "1Gi" } }],
    }, "64Mi");
    assert.deepEqual((sized.containers as any)[0].resources, { requests: { "ephemeral-storage": "64Mi" }, limits: { "ephemeral-storage": "1088Mi" } });
    assert.deepEqual((sized.initContainers as any)[0].resources, { requests: { "ephemeral-storage": "64Mi" }, limits: { "ephemeral-storage": "64Mi" } });
});
