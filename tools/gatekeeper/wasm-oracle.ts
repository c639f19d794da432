/**
 * OPA itself as the oracle of the pack's Wasm host, on seeded mutants:
 *
 *   npm run gatekeeper:wasm-oracle -- [--seeds 1,2] [--mutants 2000] [--engine plan|wasm] [--opa BIN] [--show 20] [--library DIR] [--no-team]
 *
 * Mutates the inputs of the test templates (policies/gatekeeper/wasm/testCases.ts: objects and
 * parameters; fields removed, set to null, replaced by values seen elsewhere, lists emptied or
 * grown, as tools/gatekeeper/mutate.ts does for test:gatekeeper) and requires the compiled Rego
 * (--engine: plan, the plan compiled to JavaScript, the default; wasm, the Wasm host) and
 * `opa eval` (topdown, the same modules) to give the same violations, or the same error. Prints
 * `wasm-oracle: N agree, N differ`; exit 1 on any difference, 2 without opa. With --library (a
 * checkout of the Gatekeeper library), the library's templates (compiled into the tool cache by
 * wasm-agree.ts) join, their suite cases as the bases (input.review of the case's object,
 * data.inventory of its inventory objects in Gatekeeper's layout). The plans of issue 43's team
 * corpus (tools/gatekeeper/teamCorpus.ts: the new built-ins, Go's numbers) join unless --no-team.
 */
import { existsSync } from "node:fs";
import path from "node:path";
import { opaVerdicts, wasmVerdict } from "../../policies/gatekeeper/wasm/oracle";
import { loadWasmTemplate, type CompiledTemplateRule } from "../../policies/gatekeeper/wasm/rule";
import { oracleCases } from "../../policies/gatekeeper/wasm/testCases";
import { mutate, seededRng, ValuePool } from "./mutate";
import { opaPath } from "./wasm";
import { buildInventory } from "../../policies/gatekeeper/engine";
import { parseApiVersion } from "../../policies/gatekeeper/engine/gvk";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { inNamespace } from "./differential";
import { readLibrary } from "./library";
import { teamOracleBases } from "./teamCorpus";
import { engineFlag, wasmLibraryRegistry, type Engine } from "./wasmLibrary";

/** The library's suite cases as [template, input, data] bases. */
function libraryBases(root: string, opa: string, log: (l: string) => void, engine: Engine): [CompiledTemplateRule, unknown, unknown][] {
    const library = readLibrary(root);
    const { registry } = wasmLibraryRegistry(library.templates, opa, log, engine);
    const bases: [CompiledTemplateRule, unknown, unknown][] = [];
    for (const c of library.cases) {
        const rule = registry.get(c.templateKind) as CompiledTemplateRule | undefined;
        if (!rule) continue;
        const object = inNamespace(c.object);
        const inventory = [...c.inventory.map(inNamespace), object];
        const syncOnly = inventory.filter((o: K8sObject) => o?.kind).map((o: K8sObject) => ({ ...parseApiVersion(o.apiVersion), kind: o.kind! }));
        const data = { inventory: buildInventory(inventory, undefined, syncOnly).gatekeeperData!() };
        const { group, version } = parseApiVersion(object.apiVersion);
        const review = { object, kind: { group, version, kind: object.kind }, operation: "CREATE", name: object.metadata?.name, namespace: object.metadata?.namespace, namespaceObject: null };
        bases.push([rule, { review, parameters: c.constraint.spec?.parameters ?? {} }, data]);
    }
    return bases;
}

const TESTDATA = path.resolve(__dirname, "..", "..", "policies", "gatekeeper", "wasm", "testdata");

export function main(argv: string[], log = (l: string) => console.log(l)): number {
    const at = (flag: string) => (argv.indexOf(flag) >= 0 ? argv[argv.indexOf(flag) + 1] : undefined);
    const opa = opaPath(at("--opa"));
    if (!existsSync(opa)) {
        log(`wasm-oracle: opa is not at ${opa}; build it with: npm run gatekeeper:build -- opa`);
        return 2;
    }
    let engine: Engine;
    try {
        engine = engineFlag(argv);
    } catch (err) {
        log(`wasm-oracle: ${(err as Error).message}`);
        return 2;
    }
    log(`wasm-oracle: judging ${engine === "plan" ? "the plans compiled to JavaScript" : "the Wasm modules"} against opa eval`);
    const seeds = (at("--seeds") ?? "1,2").split(",").map(Number);
    const mutants = Number(at("--mutants") ?? 2000);
    const show = Number(at("--show") ?? 20);
    const load = (n: string) => loadWasmTemplate(path.join(TESTDATA, `${n}.yaml`), undefined, { engine });
    const bases = oracleCases({ unique: load("k8stestuniqueapplabel"), range: load("k8stestreplicarange"), prefixes: load("k8stestallowedprefixes"), conflict: load("k8stestconflict") });
    const root = at("--library");
    if (root) bases.push(...libraryBases(root, opa, log, engine));
    // Issue 43's team corpus (its Rego templates): the built-ins it added, Go's numbers, a cluster-scoped custom resource.
    if (engine === "plan" && !argv.includes("--no-team")) bases.push(...teamOracleBases(opa, log));
    const pool = new ValuePool();
    for (const [, input, data] of bases) {
        pool.add(input);
        pool.add(data);
    }
    let agree = 0;
    const differ: string[] = [];
    let errors = 0;
    for (const seed of seeds) {
        const rng = seededRng(seed);
        const groups = new Map<CompiledTemplateRule, { data: unknown; inputs: unknown[]; ops: string[] }[]>();
        for (let i = 0; i < mutants; i++) {
            const [rule, input, data] = bases[i % bases.length];
            // The template's input: the object under review and the parameters (review.kind etc. kept).
            const m = mutate(input, rng, pool, { protect: (p) => p[0] === "review" && p[1] !== "object" });
            if (!m) continue;
            const list = groups.get(rule) ?? [];
            groups.set(rule, list);
            let g = list.find((x) => x.data === data);
            if (!g) list.push((g = { data, inputs: [], ops: [] }));
            g.inputs.push(m.value);
            g.ops.push(m.operations.join(", "));
        }
        for (const [rule, list] of groups) {
            for (const g of list) {
                const expected = opaVerdicts(opa, rule, g.inputs, g.data as Record<string, unknown>);
                g.inputs.forEach((input, i) => {
                    const got = wasmVerdict(rule, input, g.data);
                    if ("error" in expected[i]) errors++;
                    if (JSON.stringify(got) === JSON.stringify(expected[i])) agree++;
                    else differ.push(`seed ${seed} ${rule.kind} (${g.ops[i]}):\n  opa:  ${JSON.stringify(expected[i])}\n  wasm: ${JSON.stringify(got)}`);
                });
            }
        }
        log(`wasm-oracle: seed ${seed}: ${agree} agree, ${differ.length} differ so far (${errors} evaluation errors)`);
    }
    for (const d of differ.slice(0, show)) log(d);
    log(`wasm-oracle: ${agree} agree, ${differ.length} differ`);
    return differ.length > 0 ? 1 : 0;
}

if (require.main === module) process.exit(main(process.argv.slice(2)));
