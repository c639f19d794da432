/**
 * The Gatekeeper library's templates on the compiled path: each template's Rego compiled by opa into
 * the tool cache ($OPS_E2E_CACHE/gatekeeper-wasm, never into the project: the library is read
 * beside it; a plan, the plan compiled to JavaScript and a Wasm module each) and loaded as the pack loads a team's templates. Used by npm run test:gatekeeper (the
 * third judge), gatekeeper:wasm-agree, gatekeeper:wasm-oracle and npm run bench.
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import path from "node:path";
import { stringify } from "yaml";
import { createTemplateRegistry, parseGatekeeperConfig, type GatekeeperConfig, type TemplateRegistry } from "../../policies/gatekeeper/engine";
import type { K8sObject } from "../../policies/gatekeeper/types";
import { loadWasmTemplate } from "../../policies/gatekeeper/wasm/rule";
import { compileTemplate, refreshCompiledPlan, statusOf } from "./wasm";

/** Where the library's templates and their modules are compiled (a template folder loadWasmTemplates reads). */
export const WASM_LIBRARY_DIR = path.join(process.env.OPS_E2E_CACHE ?? path.join(homedir(), ".cache", "ops-e2e"), "gatekeeper-wasm");

/** Which compiled form of the Rego a judge runs: the plan compiled to JavaScript (what the pack runs) or the Wasm module. */
export type Engine = "plan" | "wasm";

/** The --engine flag of the tools that judge the library's compiled Rego (plan, the default, or wasm). */
export function engineFlag(argv: readonly string[]): Engine {
    const i = argv.indexOf("--engine");
    const v = i >= 0 ? argv[i + 1] : "plan";
    if (v !== "plan" && v !== "wasm") throw new Error(`--engine must be plan (the plan compiled to JavaScript, what the pack runs) or wasm (the Wasm module), got ${v}`);
    return v;
}

/** Compiles (when stale) and loads every library template into the cache; returns the registry and the templates refused. */
export function wasmLibraryRegistry(templates: Map<string, K8sObject>, opa: string, log: (l: string) => void, engine: Engine = "plan"): { registry: TemplateRegistry; refused: Map<string, string> } {
    mkdirSync(WASM_LIBRARY_DIR, { recursive: true });
    const rules = [];
    const refused = new Map<string, string>();
    for (const [kind, template] of [...templates].sort(([a], [b]) => a.localeCompare(b))) {
        const file = path.join(WASM_LIBRARY_DIR, `${kind.toLowerCase()}.yaml`);
        writeFileSync(file, stringify(template));
        try {
            const status = statusOf(file, file);
            if (status === "plan.js or manifest stale") refreshCompiledPlan(file, file);
            else if (status !== "up to date") compileTemplate(file, file, opa);
            // Judged by their Rego even where they carry CEL: this judge compares the compiled Rego with gator's Rego driver.
            rules.push(loadWasmTemplate(file, `${kind} (library)`, { rego: true, engine }));
        } catch (err) {
            refused.set(kind, (err as Error).message);
            log(`wasm: ${kind}: ${(err as Error).message}`);
        }
    }
    return { registry: createTemplateRegistry(rules), refused };
}

/** The {group, version, kind} of every object seen: a Config's syncOnly that syncs them all. */
export function syncOnlyOf(objects: readonly K8sObject[]): { group: string; version: string; kind: string }[] {
    const kinds = new Map<string, { group: string; version: string; kind: string }>();
    for (const o of objects) {
        if (!o || typeof o !== "object") continue;
        const [group, version] = String(o.apiVersion ?? "").includes("/") ? String(o.apiVersion).split("/") : ["", String(o.apiVersion ?? "")];
        if (o.kind) kinds.set(`${group}/${version}/${o.kind}`, { group, version, kind: o.kind });
    }
    return [...kinds.values()];
}

/** gator puts every inventory object into data.inventory: a Config that syncs each kind seen. */
export function syncAll(inventory: readonly K8sObject[]): GatekeeperConfig {
    return parseGatekeeperConfig({ spec: { sync: { syncOnly: syncOnlyOf(inventory) } } });
}

