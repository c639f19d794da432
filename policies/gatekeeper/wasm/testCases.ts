/**
 * Objects and inputs for the test templates of ./testdata: the engine tests (templates.test.ts)
 * and the inputs the Wasm host and opa eval must judge alike (also the bases of
 * tools/gatekeeper/wasm-oracle.ts's mutants).
 */
import type { K8sObject } from "../types";
import type { CompiledTemplateRule } from "./rule";

export const deployment = (name: string, app: string, replicas: number | undefined, image: string, podLabels: Record<string, string> = {}): K8sObject => ({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace: "team", labels: { app } },
    spec: { ...(replicas === undefined ? {} : { replicas }), template: { metadata: { labels: podLabels }, spec: { containers: [{ name: "c", image }] } } },
});
export const pod = (name: string, image: string, labels: Record<string, string> = {}): K8sObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "team", labels },
    spec: { containers: [{ name: "main", image }, { name: "side", image: "ghcr.io/ok" }] },
});
export const deployments: K8sObject[] = [
    deployment("a", "web", 1, "nginx"),
    deployment("b", "web", 5, "ghcr.io/x", { conflict: "yes" }),
    deployment("c", "web", 0, "registry.example/y"),
    deployment("d", "api", undefined, "ghcr.io/z"),
];
/** Inputs the Wasm host and opa eval must judge alike: [template, input, data]. */
export function oracleCases(rules: { unique: CompiledTemplateRule; range: CompiledTemplateRule; prefixes: CompiledTemplateRule; conflict: CompiledTemplateRule }): [CompiledTemplateRule, unknown, unknown][] {
    const { unique, range, prefixes, conflict } = rules;
    const review = (obj: K8sObject) => ({ object: obj, kind: { group: obj.apiVersion === "v1" ? "" : "apps", version: "v1", kind: obj.kind }, operation: "CREATE", name: obj.metadata?.name, namespace: "team" });
    const inventory = { inventory: { cluster: {}, namespace: { team: { "apps/v1": { Deployment: Object.fromEntries(deployments.map((d) => [d.metadata!.name, d])) } } } } };
    const cases: [CompiledTemplateRule, unknown, unknown][] = [];
    for (const d of deployments) {
        cases.push([unique, { review: review(d), parameters: {} }, inventory]);
        for (const parameters of [{ min: 2, max: 3, ratio: 1.5 }, { min: 0, max: 0 }, { ratio: 1e21 }, { ratio: 0.1 }, {}]) cases.push([range, { review: review(d), parameters }, {}]);
    }
    for (const p of [pod("p", "docker.io/evil"), pod("q", "ghcr.io/ok"), pod("r", "registry.example/a", { conflict: "x" })]) {
        for (const parameters of [{ prefixes: ["registry.example/", "ghcr.io/"] }, { prefixes: "docker.io/" }, {}]) cases.push([prefixes, { review: review(p), parameters }, {}]);
        cases.push([conflict, { review: review(p), parameters: {} }, {}]);
    }
    return cases;
}

