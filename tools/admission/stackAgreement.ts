/**
 * Agreement over a rendered stack: for every constraint with an admission policy and every object
 * of out/<stack>/resources.json (written by `npm run render -- --stack <stack>`) that either point
 * judges, the CrossGuard verdict equals the offline admission verdict.
 *
 *   npm run admission:stack -- --stack prod
 *
 * Exit status 1 on a disagreement or when the render is missing.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { evaluate } from "../../policies/gatekeeper/engine";
import { compileWildcardList } from "../../policies/gatekeeper/engine/wildcard";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { constraintFiles, loadCatalogue, specSettings } from "../../policies/admission/catalogue";
import { specRules } from "../../policies/pack/policies";
import { resourceOf } from "../../policies/pack/resources";
import { stackView } from "../../policies/pack/stack";
import { generateAdmissionPolicies, generateSpecAdmissionPolicies } from "../../policies/admission/generate";
import { admit } from "../../policies/admission/simulate";

export interface StackAgreement {
    pairs: number;
    agree: number;
    disagree: string[];
}

export function stackAgreement(stack: string, tier: string, objects: readonly K8sObject[]): StackAgreement {
    const catalogue = loadCatalogue(constraintFiles(stack, tier));
    const excluded = compileWildcardList(catalogue.excludedNamespaces);
    const namespaceLabels = (ns: string) => objects.find((o) => o.kind === "Namespace" && o.metadata?.name === ns)?.metadata?.labels ?? {};
    const out: StackAgreement = { pairs: 0, agree: 0, disagree: [] };
    for (const constraint of catalogue.constraints) {
        const generated = generateAdmissionPolicies([constraint], { excludedNamespaces: catalogue.excludedNamespaces });
        if (generated.policies.length === 0) continue;
        const violating = new Set(evaluate(objects, [constraint], { isNamespaceExcluded: excluded }, { inventory: objects }).map((r) => r.objectIndex));
        objects.forEach((object, i) => {
            const outcome = admit(generated.policies[0], generated.bindings[0], object, namespaceLabels);
            if (!outcome.matched && !violating.has(i)) return;
            out.pairs++;
            const refused = outcome.failed.length > 0 || outcome.errors.length > 0;
            if (refused === violating.has(i)) out.agree++;
            else out.disagree.push(`${constraint.kind}/${constraint.name} ${object.kind} ${object.metadata?.namespace ?? "-"}/${object.metadata?.name}: CrossGuard ${violating.has(i) ? "violation" : "pass"}, admission ${refused ? "refuses" : "admits"} ${outcome.errors.join("; ")}`);
        });
    }
    // The specification's single-object rules, with the stack's pack config.
    for (const setting of specSettings(stack, tier)) {
        const generated = generateSpecAdmissionPolicies([{ ...setting, enforcementLevel: "mandatory" }], { excludedNamespaces: catalogue.excludedNamespaces });
        const rule = specRules.find((r) => r.name === setting.rule.name)!;
        objects.forEach((object) => {
            const outcome = generated.policies.length === 0 ? undefined : admit(generated.policies[0], generated.bindings[0], object, namespaceLabels);
            const ns = object.metadata?.namespace;
            const crossGuard = (ns === undefined || !excluded(ns)) && rule.check(stackView([resourceOf(object)]), setting.config as never).length > 0;
            if (!outcome?.matched && !crossGuard) return;
            out.pairs++;
            const refused = !!outcome && (outcome.failed.length > 0 || outcome.errors.length > 0);
            if (refused === crossGuard) out.agree++;
            else out.disagree.push(`${rule.name} ${object.kind} ${ns ?? "-"}/${object.metadata?.name}: CrossGuard ${crossGuard ? "violation" : "pass"}, admission ${refused ? "refuses" : "admits"}`);
        });
    }
    return out;
}

function main(argv: string[]): number {
    const i = argv.indexOf("--stack");
    const stack = i >= 0 ? argv[i + 1] : undefined;
    if (!stack) {
        console.error("usage: npm run admission:stack -- --stack <dev|prod|ci>");
        return 1;
    }
    const file = path.resolve("out", stack, "resources.json");
    if (!existsSync(file)) {
        console.error(`${file}: not found; run npm run render -- --stack ${stack} first`);
        return 1;
    }
    const resources: Array<{ type: string; inputs?: K8sObject }> = JSON.parse(readFileSync(file, "utf8"));
    const objects = resources.filter((r) => r.type.startsWith("kubernetes:") && r.inputs?.kind).map((r) => r.inputs!);
    // The stack's tier as the program reads it (ops:environmentTier, default dev).
    const stackFile = path.resolve(`Pulumi.${stack}.yaml`);
    const tier = existsSync(stackFile) ? String((parse(readFileSync(stackFile, "utf8"))?.config ?? {})["ops:environmentTier"] ?? "dev") : "dev";
    const result = stackAgreement(stack, tier, objects);
    console.log(`admission agreement (${stack} render): objects ${objects.length}, judged pairs ${result.pairs}, agree ${result.agree}, disagree ${result.disagree.length}`);
    for (const d of result.disagree) console.log(`  ${d}`);
    return result.disagree.length === 0 ? 0 : 1;
}

if (require.main === module) process.exitCode = main(process.argv.slice(2));
