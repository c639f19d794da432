/**
 * A team's own ConstraintTemplates in `npm run test:gatekeeper`: the test templates of the pack's
 * Wasm host (policies/gatekeeper/wasm/testdata: a referential one reading data.inventory, one with
 * libs in Rego v1, one with a parameter schema, one calling a built-in the host provides
 * (semver.is_valid), one raising an evaluation error, one with Rego and CEL), each with its own
 * constraint and base objects, mutated like the library's cases and judged by gator (with its CEL
 * driver on, its default: the template's CEL when it has some, else its Rego, under Gatekeeper's
 * constraint framework) and by the pack, which judges a team's template by its CEL the same way
 * (policies/cel/judge.ts), else with its committed Wasm module. A template calling a built-in the host does not provide
 * (k8stestlookup, net.lookup_ip_addr) cannot be judged by the pack: it must be refused when it
 * loads, naming the built-in.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { createTemplateRegistry, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { loadWasmTemplate, type CompiledTemplateRule } from "../../policies/gatekeeper/wasm/rule";
import { deployment, deployments, pod } from "../../policies/gatekeeper/wasm/testCases";
import type { Group } from "./groups";

export const TESTDATA = path.resolve(__dirname, "..", "..", "policies", "gatekeeper", "wasm", "testdata");

/** The test template the host must refuse, and the built-in it must name. */
export const REFUSED = { file: "k8stestlookup.yaml", builtin: "net.lookup_ip_addr" };

const constraint = (kind: string, match: unknown, parameters?: Record<string, unknown>): K8sObject => ({
    apiVersion: "constraints.gatekeeper.sh/v1beta1",
    kind,
    metadata: { name: kind.toLowerCase().replace(/^k8stest/, "test-") },
    spec: { match, ...(parameters ? { parameters } : {}) },
});

const DEPLOYMENTS = { kinds: [{ apiGroups: ["apps"], kinds: ["Deployment"] }] };
const PODS = { kinds: [{ apiGroups: [""], kinds: ["Pod"] }] };
const pods = [pod("p", "docker.io/evil"), pod("q", "ghcr.io/ok"), pod("r", "registry.example/a", { conflict: "x" })];
const versioned = ["1.2.3", "v1.0.0", "1.2", "1.2.3-rc.1+build.5", "01.2.3", "latest"].map((version, i) => pod(`v${i}`, "ghcr.io/ok", { version }));

/** Each test template's constraint and the objects it judges (their mutants too). */
const CASES: Record<string, { constraint: K8sObject; objects: K8sObject[] }> = {
    K8sTestUniqueAppLabel: { constraint: constraint("K8sTestUniqueAppLabel", DEPLOYMENTS), objects: [...deployments, deployment("e", "api", 2, "ghcr.io/y")] },
    K8sTestAllowedPrefixes: { constraint: constraint("K8sTestAllowedPrefixes", PODS, { prefixes: ["registry.example/", "ghcr.io/"] }), objects: [...pods, deployments[0]] },
    K8sTestReplicaRange: { constraint: constraint("K8sTestReplicaRange", DEPLOYMENTS, { min: 2, max: 3, ratio: 1.5 }), objects: deployments },
    K8sTestConflict: { constraint: constraint("K8sTestConflict", PODS), objects: [...pods, deployments[1]] },
    K8sTestSemver: { constraint: constraint("K8sTestSemver", PODS), objects: versioned },
    K8sTestRequiredOwner: { constraint: constraint("K8sTestRequiredOwner", { kinds: [{ apiGroups: ["", "apps"], kinds: ["Pod", "Deployment"] }] }, { key: "app" }), objects: [...pods, ...deployments] },
};

export interface CustomTemplates {
    /** The ConstraintTemplate objects gator loads, by kind. */
    templates: Map<string, K8sObject>;
    /** The pack's templates: each test template with its committed Wasm module. */
    registry: TemplateRegistry;
    groups: (perBase: number) => Group[];
    /** The refusal of the template calling a built-in the host does not provide (its error), or a problem. */
    refusal: { ok: boolean; message: string };
}

export function customTemplates(): CustomTemplates {
    const templates = new Map<string, K8sObject>();
    const rules: CompiledTemplateRule[] = [];
    let refusal = { ok: false, message: `${REFUSED.file} was loaded, but it calls ${REFUSED.builtin}, which the host does not provide` };
    for (const f of readdirSync(TESTDATA).filter((n) => n.endsWith(".yaml")).sort()) {
        const file = path.join(TESTDATA, f);
        if (f === REFUSED.file) {
            try {
                loadWasmTemplate(file, `testdata/${f}`);
            } catch (err) {
                const message = (err as Error).message;
                refusal = { ok: message.includes(`built-in function ${REFUSED.builtin},`), message };
            }
            continue;
        }
        const rule = loadWasmTemplate(file, `testdata/${f}`);
        if (!CASES[rule.kind]) throw new Error(`${file}: no test case for ${rule.kind} in tools/gatekeeper/customTemplates.ts`);
        rules.push(rule);
        templates.set(rule.kind, parse(readFileSync(file, "utf8")) as K8sObject);
    }
    const registry = createTemplateRegistry(rules);
    const groups = (perBase: number): Group[] =>
        rules.map((r) => ({
            id: `custom ${r.kind}`,
            constraints: [CASES[r.kind].constraint],
            objects: CASES[r.kind].objects,
            inventory: [],
            objectMutants: perBase,
            constraintMutants: CASES[r.kind].constraint.spec?.parameters ? 10 : 0,
            registry,
            native: true,
        }));
    return { templates, registry, groups, refusal };
}
