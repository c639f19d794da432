import assert from "node:assert/strict";
import { missingShared, testNeeding } from "../../test/skip";
import { admissible } from "./mutants";

const pod = (spec: unknown) => ({ apiVersion: "v1", kind: "Pod", metadata: { name: "web" }, spec });
const hpa = (scaleTargetRef: unknown) => ({
    apiVersion: "autoscaling/v2",
    kind: "HorizontalPodAutoscaler",
    metadata: { name: "web" },
    spec: { maxReplicas: 3, scaleTargetRef },
});

testNeeding(
    "admissible: a Pod gets the API server's pod rules, an HPA's target needs an API group",
    () => {
        const cases: [string, unknown, boolean][] = [
            ["a valid Pod", pod({ containers: [{ name: "app", image: "nginx" }] }), true],
            ["a container without an image", pod({ containers: [{ name: "app" }] }), false],
            ["a null image (decoded: absent)", pod({ containers: [{ name: "app", image: null }] }), false],
            ["a Pod without spec", pod(null), false],
            ["a name shared by a container and an init container", pod({ containers: [{ name: "a", image: "x" }], initContainers: [{ name: "a", image: "y" }] }), false],
            ["an ephemeral container named like a container", pod({ containers: [{ name: "a", image: "x" }], ephemeralContainers: [{ name: "a", image: "y" }] }), false],
            ["an ephemeral container without an image", pod({ containers: [{ name: "a", image: "x" }], ephemeralContainers: [{ name: "b" }] }), false],
            ["an ephemeral container of its own name", pod({ containers: [{ name: "a", image: "x" }], ephemeralContainers: [{ name: "b", image: "y" }] }), true],
            ["scaleTargetRef apps/v1 Deployment", hpa({ apiVersion: "apps/v1", kind: "Deployment", name: "web" }), true],
            ["scaleTargetRef without apiVersion", hpa({ kind: "Deployment", name: "web" }), false],
            ["scaleTargetRef v1 Deployment (no group)", hpa({ apiVersion: "v1", kind: "Deployment", name: "web" }), false],
            ["scaleTargetRef v1 ReplicationController", hpa({ apiVersion: "v1", kind: "ReplicationController", name: "web" }), true],
            ["a Deployment whose pod template has a null spec", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: null } } }, false],
            ["a Deployment with containers", { apiVersion: "apps/v1", kind: "Deployment", metadata: { name: "web" }, spec: { selector: { matchLabels: { app: "web" } }, template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "a", image: "x" }] } } } }, true],
            ["scaleTargetRef a/b/c", hpa({ apiVersion: "a/b/c", kind: "Deployment", name: "web" }), false],
        ];
        const got = admissible(cases.map(([, o]) => o));
        cases.forEach(([what, , want], i) => assert.equal(got[i], want, what));
    },
    missingShared(["tools", "k8s-strict-check.py"]),
);
