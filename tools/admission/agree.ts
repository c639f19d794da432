/**
 * Agreement of CrossGuard and a real API server (issue 12): installs the admission policy of
 * every fixture's constraint (bound with Deny and an objectSelector on one label, so each
 * fixture is judged by its own policy only), server-side dry-run creates each fixture, and
 * compares "refused by the policy" with the CrossGuard verdict of the same fixture.
 *
 *   npm run admission:agree -- --kubeconfig FILE [--cases FILE] [--keep]
 *
 * Without --kubeconfig it says so and exits 0 (the e2e control plane of issue 11 gives one).
 * Needs kubectl on PATH. Exit status 1 when a fixture disagrees or the server cannot be used.
 */
import { spawnSync } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { buildConstraint } from "../../policies/gatekeeper/engine";
import { templateRegistry } from "../../policies/gatekeeper/templates";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { crossGuardViolates, fixturesFromCases, type Fixture } from "../../policies/admission/agreement";
import { generateAdmissionPolicies } from "../../policies/admission/generate";

/** The label that ties a fixture to the binding of its own policy. */
export const FIXTURE_LABEL = "admission-agreement.ops-environment/policy";

export interface ServerAgreement {
    fixtures: number;
    agree: number;
    disagree: string[];
    /** Fixtures the API server refused for another reason (invalid object...), with its message. */
    unusable: string[];
}

function kubectl(kubeconfig: string, args: string[], input?: string) {
    const r = spawnSync("kubectl", ["--kubeconfig", kubeconfig, ...args], { input, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
    if (r.error) throw new Error(`kubectl: ${r.error.message}`);
    return { ok: r.status === 0, out: r.stdout ?? "", err: (r.stderr ?? "").trim() };
}

/** One policy (and binding) per distinct constraint of the fixtures, named agree-<n>. */
function policiesFor(fixtures: readonly Fixture[]) {
    const byConstraint = new Map<string, string>();
    const objects: Record<string, any>[] = [];
    const policyOf = new Map<Fixture, string>();
    for (const f of fixtures) {
        const key = JSON.stringify(f.constraint);
        let name = byConstraint.get(key);
        if (!name) {
            name = `agree-${byConstraint.size + 1}-${f.constraint.kind.toLowerCase()}`;
            byConstraint.set(key, name);
            const generated = generateAdmissionPolicies([buildConstraint(f.constraint, templateRegistry)]);
            if (generated.policies.length === 1) {
                const [policy, binding] = [generated.policies[0], generated.bindings[0]];
                policy.metadata.name = name;
                binding.metadata.name = name;
                binding.spec.policyName = name;
                binding.spec.validationActions = ["Deny"];
                binding.spec.matchResources = { objectSelector: { matchLabels: { [FIXTURE_LABEL]: name } } };
                objects.push(policy, binding);
            }
        }
        policyOf.set(f, name);
    }
    return { objects, policyOf };
}

export function agreeWithApiServer(kubeconfig: string, fixtures: readonly Fixture[], opts: { keep?: boolean; log?: (line: string) => void } = {}): ServerAgreement {
    const log = opts.log ?? ((line: string) => console.log(line));
    const probe = kubectl(kubeconfig, ["version", "-o", "json"]);
    if (!probe.ok) throw new Error(`the API server of ${kubeconfig} does not answer: ${probe.err}`);
    const { objects, policyOf } = policiesFor(fixtures);
    const list = JSON.stringify({ apiVersion: "v1", kind: "List", items: objects });
    const applied = kubectl(kubeconfig, ["apply", "--server-side", "--field-manager", "admission-agree", "-f", "-"], list);
    if (!applied.ok) throw new Error(`installing the policies failed: ${applied.err}`);
    try {
        waitForPolicies(kubeconfig, objects.filter((o) => o.kind === "ValidatingAdmissionPolicy").map((o) => o.metadata.name));
        for (const ns of namespacesOf(fixtures)) {
            const created = kubectl(kubeconfig, ["create", "namespace", ns]);
            if (!created.ok && !/AlreadyExists|already exists/.test(created.err)) throw new Error(`namespace ${ns}: ${created.err}`);
        }
        const result: ServerAgreement = { fixtures: fixtures.length, agree: 0, disagree: [], unusable: [] };
        for (const f of fixtures) {
            const crossGuard = crossGuardViolates(buildConstraint(f.constraint, templateRegistry), f.object, f.inventory);
            const object = labelled(f.object, policyOf.get(f)!);
            let r = kubectl(kubeconfig, ["create", "--dry-run=server", "-o", "name", "-f", "-"], JSON.stringify(object));
            // An object the control plane bootstraps (e.g. the ClusterRole system:aggregate-to-edit):
            // the same object as an UPDATE that replaces it (the policies judge CREATE and UPDATE alike).
            if (!r.ok && /AlreadyExists/.test(r.err)) r = kubectl(kubeconfig, ["replace", "--dry-run=server", "-o", "name", "-f", "-"], JSON.stringify(object));
            let refused: boolean;
            if (r.ok) refused = false;
            // Only this harness's policies count; a refusal by another policy installed on the cluster makes the case unusable.
            else if (/ValidatingAdmissionPolicy 'agree-/.test(r.err)) refused = true;
            else {
                result.unusable.push(`${f.id}: ${errorText(r.err)}`);
                continue;
            }
            if (refused === crossGuard) result.agree++;
            else result.disagree.push(`${f.id}: CrossGuard ${crossGuard ? "violation" : "pass"}, API server ${refused ? "refuses" : "admits"}${r.ok ? "" : ` (${errorText(r.err)})`}`);
        }
        log(`admission agreement (API server): fixtures ${result.fixtures}, agree ${result.agree}, disagree ${result.disagree.length}, unusable ${result.unusable.length}`);
        for (const line of [...result.disagree.map((d) => `  disagree ${d}`), ...result.unusable.map((u) => `  unusable ${u}`)]) log(line);
        return result;
    } finally {
        if (!opts.keep) kubectl(kubeconfig, ["delete", "--ignore-not-found", "-f", "-"], list);
    }
}

/** kubectl's error without its deprecation warnings, on one line. */
function errorText(err: string): string {
    return err.split("\n").filter((l) => l.trim() !== "" && !l.startsWith("Warning:")).join(" ").slice(0, 400);
}

/** The fixture with the label its binding selects (namespaced objects land in their namespace or default). */
function labelled(object: K8sObject, policy: string): K8sObject {
    const copy = structuredClone(object);
    copy.metadata = { ...(copy.metadata ?? {}), labels: { ...(copy.metadata?.labels ?? {}), [FIXTURE_LABEL]: policy } };
    return copy;
}

function namespacesOf(fixtures: readonly Fixture[]): string[] {
    return [...new Set(fixtures.map((f) => f.object.metadata?.namespace).filter((n): n is string => typeof n === "string" && n !== ""))];
}

/** Waits until the API server has type-checked every policy (status.observedGeneration set), at most 60 s. */
function waitForPolicies(kubeconfig: string, names: string[]): void {
    const deadline = Date.now() + 60_000;
    for (;;) {
        const r = kubectl(kubeconfig, ["get", "validatingadmissionpolicies", "-o", "json"]);
        if (r.ok) {
            const items: any[] = JSON.parse(r.out).items ?? [];
            const ready = new Set(items.filter((i) => i.status?.observedGeneration === i.metadata?.generation).map((i) => i.metadata.name));
            if (names.every((n) => ready.has(n))) break;
        }
        if (Date.now() > deadline) throw new Error("the API server did not type-check the policies within 60 s");
        spawnSync("sleep", ["1"]);
    }
    // The admission plugin picks policies up from its informer a moment after the status is written.
    spawnSync("sleep", ["3"]);
}

function main(argv: string[]): number {
    const arg = (name: string) => {
        const i = argv.indexOf(name);
        return i >= 0 ? argv[i + 1] : undefined;
    };
    const kubeconfig = arg("--kubeconfig") ?? process.env.ADMISSION_KUBECONFIG;
    if (!kubeconfig) {
        console.log("admission agreement against an API server: skipped (no --kubeconfig FILE given)");
        return 0;
    }
    if (!existsSync(kubeconfig)) {
        console.error(`--kubeconfig ${kubeconfig}: no such file`);
        return 1;
    }
    const casesFile = arg("--cases") ?? path.resolve(__dirname, "..", "..", "..", "shared", "conformance", "gatekeeper", "cases.json");
    if (!existsSync(casesFile)) {
        console.error(`--cases ${casesFile}: no such file`);
        return 1;
    }
    try {
        const fixtures = fixturesFromCases(JSON.parse(readFileSync(casesFile, "utf8")).cases);
        const result = agreeWithApiServer(kubeconfig, fixtures, { keep: argv.includes("--keep") });
        return result.disagree.length === 0 ? 0 : 1;
    } catch (err) {
        console.error(`admission agreement: ${(err as Error).message}`);
        return 1;
    }
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
