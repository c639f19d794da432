/**
 * npm run bench's class floor (tools/bench/classFloorProgram.ts): each resource type of the program
 * is replayed through its provider class, so the floor carries what the class adds (aliases,
 * output-only properties); a type with no class of its own (a CRD's) goes through CustomResource.
 */
import assert from "node:assert/strict";
import { describe, it } from "node:test";
import * as k8s from "@pulumi/kubernetes";
import * as random from "@pulumi/random";
import * as tls from "@pulumi/tls";
import { classOf } from "../tools/bench/classFloorProgram";

describe("bench: the class floor's classes", () => {
    it("maps built-in kubernetes types, random and tls to their classes, and other API groups to none", () => {
        assert.equal(classOf("kubernetes:apps/v1:StatefulSet"), k8s.apps.v1.StatefulSet);
        assert.equal(classOf("kubernetes:core/v1:PersistentVolumeClaimPatch"), k8s.core.v1.PersistentVolumeClaimPatch);
        assert.equal(classOf("kubernetes:networking.k8s.io/v1:NetworkPolicy"), k8s.networking.v1.NetworkPolicy);
        assert.equal(classOf("kubernetes:admissionregistration.k8s.io/v1:ValidatingAdmissionPolicy"), k8s.admissionregistration.v1.ValidatingAdmissionPolicy);
        assert.equal(classOf("kubernetes:rbac.authorization.k8s.io/v1:RoleBinding"), k8s.rbac.v1.RoleBinding);
        assert.equal(classOf("kubernetes:helm.sh/v3:Release"), k8s.helm.v3.Release);
        assert.equal(classOf("random:index/randomPassword:RandomPassword"), random.RandomPassword);
        assert.equal(classOf("tls:index/privateKey:PrivateKey"), tls.PrivateKey);
        assert.equal(classOf("kubernetes:autoscaling.k8s.io/v1:VerticalPodAutoscaler"), undefined, "the vertical autoscaler's group, not autoscaling");
        assert.equal(classOf("kubernetes:cert-manager.io/v1:ClusterIssuer"), undefined);
    });
});
