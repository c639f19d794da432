/**
 * OPA itself as the oracle of the Wasm host: the same template modules (modulesOf) evaluated by
 * `opa eval` (opa 1.17.1, topdown, non-strict built-in errors as in Gatekeeper) and by the host.
 * Used by templates.test.ts (fixed inputs) and tools/gatekeeper/wasm-oracle.ts (seeded mutants).
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { gatekeeperErrorText, type CompiledTemplateRule } from "./rule";
import { modulesOf } from "./template";
import { goNumbersJSON } from "./host";

/** A judgement: the hook's violations (sorted by their JSON), or the error text as Gatekeeper reports it. */
export type Verdict = { violations: unknown[] } | { error: string };

/** JSON with object keys sorted (OPA and the host may order them differently). */
function canonical(v: unknown): string {
    if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
    if (v !== null && typeof v === "object") {
        return `{${Object.keys(v)
            .sort()
            .map((k) => `${JSON.stringify(k)}:${canonical((v as Record<string, unknown>)[k])}`)
            .join(",")}}`;
    }
    return JSON.stringify(v);
}

const sortedJSON = (xs: unknown[]) => xs.map(canonical).sort();

export function wasmVerdict(rule: CompiledTemplateRule, input: unknown, data: unknown): Verdict {
    try {
        return { violations: sortedJSON((rule.evaluateInput(input, data)[0]?.result ?? []) as unknown[]) };
    } catch (err) {
        return { error: gatekeeperErrorText((err as Error).message, rule.parsed) };
    }
}

/** opa eval of every input (one process for all of them; one per input when the batch stops on an error). */
export function opaVerdicts(opa: string, rule: CompiledTemplateRule, inputs: readonly unknown[], data: Record<string, unknown>): Verdict[] {
    const work = mkdtempSync(path.join(tmpdir(), "wasm-oracle-"));
    try {
        const src = path.join(work, "src");
        mkdirSync(src);
        for (const [name, text] of Object.entries(modulesOf(rule.parsed, rule.template))) writeFileSync(path.join(src, name), text);
        const run = (batch: readonly unknown[]): { values: unknown[][] } | { error: string } => {
            writeFileSync(path.join(src, "data.json"), goNumbersJSON(JSON.stringify({ ...data, oracle_inputs: batch })));
            const query = "[v | some i; inp := data.oracle_inputs[i]; v := [x | data.hooks.violation[x]] with input as inp]";
            const args = ["eval", ...(rule.parsed.version === "v1" ? [] : ["--v0-compatible"]), "-f", "json", "-b", src, query];
            const r = spawnSync(opa, args, { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 });
            const out = JSON.parse(r.stdout);
            if (r.status === 0) return { values: out.result[0].expressions[0].value as unknown[][] };
            const e = out.errors?.[0];
            // Gatekeeper names the template's module "template" (frameworks drivers/rego).
            return { error: e?.location ? `${path.basename(e.location.file, ".rego")}:${e.location.row}: ${e.code}: ${e.message}` : `${e?.code}: ${e?.message}` };
        };
        const all = run(inputs);
        if ("values" in all) return all.values.map((v) => ({ violations: sortedJSON(v) }));
        return inputs.map((input) => {
            const one = run([input]);
            return "values" in one ? { violations: sortedJSON(one.values[0]) } : { error: one.error };
        });
    } finally {
        rmSync(work, { recursive: true, force: true });
    }
}
